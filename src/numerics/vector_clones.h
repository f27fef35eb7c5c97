// TPUSIM_VECTOR_CLONES marks a whole-array loop to be compiled twice, for
// AVX-512 and for the baseline x86-64, with the dynamic loader picking one
// for the host (an ifunc): one binary, the host's widest vectors.
#ifndef TPUSIM_NUMERICS_VECTOR_CLONES_H_
#define TPUSIM_NUMERICS_VECTOR_CLONES_H_

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TPUSIM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define TPUSIM_VECTOR_CLONES
#endif

#endif  // TPUSIM_NUMERICS_VECTOR_CLONES_H_
