// The bytes that carry tensors between the processes of an mpirun job. Both
// ends run the same binary on the same kind of machine, so raw element bytes
// go as they are; the decoder still checks every length, since a truncated
// message must fail cleanly rather than read past its end.
#ifndef TPUSIM_MPI_WIRE_H_
#define TPUSIM_MPI_WIRE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::mpi {

// Appends to `out`; Read* consume from the front of `in`.
void WriteInt(int64_t v, std::string& out);
void WriteString(std::string_view s, std::string& out);
void WriteTensors(const std::vector<Tensor>& values, std::string& out);

StatusOr<int64_t> ReadInt(std::string_view& in);
StatusOr<std::string> ReadString(std::string_view& in);
StatusOr<std::vector<Tensor>> ReadTensors(std::string_view& in);

}  // namespace tpusim::mpi

#endif  // TPUSIM_MPI_WIRE_H_
