"""The LAPACK custom calls end to end: programs that call each jaxlib CPU FFI
target the way a JAX CPU export does (layouts as index tensors, ui8
attributes in mhlo.backend_config, operand/result aliases) run with
`tpusim run` and match scipy.linalg.lapack's (and scipy.linalg.blas's) same
routine; one program with the TPU targets is checked against numpy.

Usage: /usr/bin/python3 lapack_test.py TPUSIM_BINARY
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from scipy.linalg import blas, lapack

TPUSIM = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="tpusim_lapack_")
FAILURES = []

MLIR_TYPE = {np.float32: "f32", np.float64: "f64", np.complex64: "complex<f32>",
             np.complex128: "complex<f64>", np.int32: "i32"}
LETTER = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}
REAL = {np.float32: np.float32, np.float64: np.float64, np.complex64: np.float32,
        np.complex128: np.float64}
TYPES = [np.float32, np.float64, np.complex64, np.complex128]


def ttype(shape, dtype):
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{MLIR_TYPE[dtype]}>"


def layout(rank, matrix):
    """JAX's layouts: column-major matrices, batch dims major."""
    if rank == 0:
        return "dense<> : tensor<0xindex>"
    if rank == 1:
        return "dense<0> : tensor<1xindex>"  # MLIR prints one element as a splat
    dims = ([rank - 2, rank - 1] + list(range(rank - 3, -1, -1))) if matrix else \
        list(range(rank - 1, -1, -1))
    return f"dense<[{', '.join(map(str, dims))}]> : tensor<{rank}xindex>"


def program(target, operands, results, config, aliases=((0, 0),)):
    """A JAX-style CPU export calling `target` once. operands/results:
    (shape, dtype, is_matrix)."""
    args = ", ".join(f"%arg{i}: {ttype(s, d)}" for i, (s, d, _) in enumerate(operands))
    uses = ", ".join(f"%arg{i}" for i in range(len(operands)))
    ins = ", ".join(ttype(s, d) for s, d, _ in operands)
    outs = ", ".join(ttype(s, d) for s, d, _ in results)
    cfg = ", ".join(f"{k} = {v}" for k, v in sorted(config.items()))
    alias = ", ".join(
        f"#stablehlo.output_operand_alias<output_tuple_indices = [{o}], operand_index = {i}, "
        f"operand_tuple_indices = []>" for o, i in aliases)
    op_layouts = ", ".join(layout(len(s), m) for s, _, m in operands)
    res_layouts = ", ".join(layout(len(s), m) for s, _, m in results)
    rets = ", ".join(f"%0#{i}" for i in range(len(results)))
    return f"""module @jit_f attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main({args}) -> ({outs}) {{
    %0:{len(results)} = stablehlo.custom_call @{target}({uses}) {{api_version = 4 : i32, mhlo.backend_config = {{{cfg}}}, operand_layouts = [{op_layouts}], output_operand_aliases = [{alias}], result_layouts = [{res_layouts}]}} : ({ins}) -> ({outs})
    return {rets} : {outs}
  }}
}}
"""


def u8(c):
    return f"{ord(c)} : ui8"


def run(name, text, inputs):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "prog.mlir")
    with open(path, "w") as f:
        f.write(text)
    cmd = [TPUSIM, "run", path, "--numerics", "reference", "--output-dir", os.path.join(d, "out")]
    for i, x in enumerate(inputs):
        p = os.path.join(d, f"in{i}.npy")
        np.save(p, x)
        cmd += ["--input", p]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{name}: tpusim exited {r.returncode}: {r.stderr.strip()}")
    out = []
    i = 0
    while os.path.exists(os.path.join(d, "out", f"result{i}.npy")):
        out.append(np.load(os.path.join(d, "out", f"result{i}.npy")))
        i += 1
    return out


def check(name, got, want, dtype, scale=None):
    """Same routine, same input: equal up to a few ulps of the data."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        FAILURES.append(f"{name}: shape {got.shape} != {want.shape}")
        return
    eps = np.finfo(REAL[dtype]).eps
    scale = max(np.abs(want).max(initial=0), 1.0) if scale is None else scale
    err = np.abs(got.astype(np.complex128) - want.astype(np.complex128)).max(initial=0)
    if not err <= 64 * eps * scale:
        FAILURES.append(f"{name}: max error {err:.3g} > {64 * eps * scale:.3g}")


def rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hermitian(n, dtype, seed):
    b = rand((n, n), dtype, seed)
    return (b @ b.conj().T + n * np.eye(n)).astype(dtype)


def lapack_fn(name, dtype):
    return getattr(lapack, LETTER[dtype] + name)


def test_getrf(t):
    a = rand((5, 4), t, 1)
    target = f"lapack_{LETTER[t]}getrf_ffi"
    r = run(target, program(target, [((5, 4), t, True)],
                            [((5, 4), t, True), ((4,), np.int32, False), ((), np.int32, False)],
                            {}), [a])
    lu, piv, info = lapack_fn("getrf", t)(a)
    check(target + " lu", r[0], lu, t)
    check(target + " pivots", r[1] - 1, piv, t)
    check(target + " info", r[2], info, t)


def test_geqrf_orgqr(t):
    a = rand((5, 3), t, 2)
    target = f"lapack_{LETTER[t]}geqrf_ffi"
    r = run(target, program(target, [((5, 3), t, True)], [((5, 3), t, True), ((3,), t, False)],
                            {}), [a])
    qr, tau, _, _ = lapack_fn("geqrf", t)(a)
    check(target + " a", r[0], qr, t)
    check(target + " tau", r[1], tau, t)
    name = "ungqr" if np.issubdtype(t, np.complexfloating) else "orgqr"
    target = f"lapack_{LETTER[t]}{name}_ffi"
    q = run(target, program(target, [((5, 3), t, True), ((3,), t, False)], [((5, 3), t, True)],
                            {}), [qr, tau])
    q_ref, _, _ = lapack_fn(name, t)(qr, tau)
    check(target, q[0], q_ref, t)


def test_syevd(t):
    n = 5
    a = hermitian(n, t, 3)
    name = "heevd" if np.issubdtype(t, np.complexfloating) else "syevd"
    target = f"lapack_{LETTER[t]}{name}_ffi"
    r = run(target, program(target, [((n, n), t, True)],
                            [((n, n), t, True), ((n,), REAL[t], False), ((), np.int32, False)],
                            {"mode": u8("V"), "uplo": u8("L")}), [a])
    w, v, info = lapack_fn(name, t)(a, compute_v=1, lower=1)
    check(target + " w", r[1], w, t)
    check(target + " v", r[0], v, t)
    check(target + " info", r[2], info, t)


def test_gesdd(t):
    m, n = 4, 6
    a = rand((m, n), t, 4)
    target = f"lapack_{LETTER[t]}gesdd_ffi"
    for mode, full in (("A", 1), ("S", 0)):
        k = min(m, n)
        uc, vr = (m, n) if full else (k, k)
        r = run(target + mode, program(
            target, [((m, n), t, True)],
            [((m, n), t, True), ((k,), REAL[t], False), ((m, uc), t, True), ((vr, n), t, True),
             ((), np.int32, False)], {"mode": u8(mode)}), [a])
        u, s, vt, info = lapack_fn("gesdd", t)(a, compute_uv=1, full_matrices=full)
        check(target + mode + " s", r[1], s, t)
        check(target + mode + " u", r[2], u, t)
        check(target + mode + " vt", r[3], vt, t)
        check(target + mode + " info", r[4], info, t)


def test_potrf(t):
    n = 5
    a = hermitian(n, t, 5)
    target = f"lapack_{LETTER[t]}potrf_ffi"
    for uplo in "LU":
        r = run(target + uplo, program(target, [((n, n), t, True)],
                                       [((n, n), t, True), ((), np.int32, False)],
                                       {"uplo": u8(uplo)}), [a])
        c, info = lapack_fn("potrf", t)(a, lower=uplo == "L", clean=0)
        check(target + uplo, r[0], c, t)
        check(target + uplo + " info", r[1], info, t)


def test_gees(t):
    n = 5
    a = rand((n, n), t, 6)
    target = f"lapack_{LETTER[t]}gees_ffi"
    cplx = np.issubdtype(t, np.complexfloating)
    eig = [((n,), t, False)] * (1 if cplx else 2)
    r = run(target, program(target, [((n, n), t, True)],
                            [((n, n), t, True), ((n, n), t, True)] + eig +
                            [((), np.int32, False), ((), np.int32, False)],
                            {"mode": u8("V"), "sort": u8("N")}), [a])
    ref = lapack_fn("gees", t)(lambda *x: None, a, compute_v=1, sort_t=0)
    check(target + " t", r[0], ref[0], t)
    if cplx:
        check(target + " w", r[2], ref[2], t)
        check(target + " vs", r[1], ref[3], t)
    else:
        check(target + " wr", r[2], ref[2], t)
        check(target + " wi", r[3], ref[3], t)
        check(target + " vs", r[1], ref[4], t)
    check(target + " info", r[-1], ref[-1], t)


def test_gehrd(t):
    n = 5
    a = rand((n, n), t, 7)
    target = f"lapack_{LETTER[t]}gehrd_ffi"
    r = run(target, program(target, [((n, n), t, True)],
                            [((n, n), t, True), ((n - 1,), t, False), ((), np.int32, False)],
                            {"low": "1 : i32", "high": f"{n} : i32"}), [a])
    ht, tau, info = lapack_fn("gehrd", t)(a, lo=0, hi=n - 1)
    check(target + " a", r[0], ht, t)
    check(target + " tau", r[1], tau, t)
    check(target + " info", r[2], info, t)


def test_sytrd(t):
    n = 5
    a = hermitian(n, t, 8)
    name = "hetrd" if np.issubdtype(t, np.complexfloating) else "sytrd"
    target = f"lapack_{LETTER[t]}{name}_ffi"
    r = run(target, program(target, [((n, n), t, True)],
                            [((n, n), t, True), ((n,), REAL[t], False),
                             ((n - 1,), REAL[t], False), ((n - 1,), t, False),
                             ((), np.int32, False)], {"uplo": u8("L")}), [a])
    c, d, e, tau, info = lapack_fn(name, t)(a, lower=1)
    check(target + " a", r[0], c, t)
    check(target + " d", r[1], d, t)
    check(target + " e", r[2], e, t)
    check(target + " tau", r[3], tau, t)


def test_gtsv(t):
    m, nrhs = 6, 2
    dl, d, du = rand((m,), t, 9), rand((m,), t, 10) + 3, rand((m,), t, 11)
    dl[0] = 0
    du[-1] = 0
    b = rand((m, nrhs), t, 12)
    target = f"lapack_{LETTER[t]}gtsv_ffi"
    vec = ((m,), t, False)
    r = run(target, program(target, [vec, vec, vec, ((m, nrhs), t, True)],
                            [vec, vec, vec, ((m, nrhs), t, True), ((), np.int32, False)], {},
                            aliases=((0, 0), (1, 1), (2, 2), (3, 3))), [dl, d, du, b])
    _, _, _, x, info = lapack_fn("gtsv", t)(dl[1:], d, du[:-1], b)
    check(target + " x", r[3], x, t)
    check(target + " info", r[4], info, t)


def test_trsm(t):
    m, n = 4, 3
    b = rand((m, n), t, 13)
    # jaxlib's first FFI form (a, b, alpha) and jax 0.5.3's (a, b), alpha 1.
    for target, alpha in ((f"blas_{LETTER[t]}trsm_ffi", 2), (f"lapack_{LETTER[t]}trsm_ffi", None)):
        for side in "LR":
            k = m if side == "L" else n
            a = rand((k, k), t, 14) + 4 * np.eye(k, dtype=t)
            for trans in "NTC":
                for uplo in "LU":
                    operands = [((k, k), t, True), ((m, n), t, True)]
                    inputs = [a, b]
                    if alpha is not None:
                        operands.append(((), t, False))
                        inputs.append(np.array(alpha, dtype=t))
                    r = run(f"{target}{side}{trans}{uplo}", program(
                        target, operands, [((m, n), t, True)],
                        {"side": u8(side), "uplo": u8(uplo), "trans_x": u8(trans),
                         "diag": u8("N")}, aliases=((0, 1),)), inputs)
                    x = getattr(blas, LETTER[t] + "trsm")(
                        alpha or 1, a, b, side=int(side == "R"), lower=int(uplo == "L"),
                        trans_a="NTC".index(trans), diag=0)
                    check(f"{target} side {side} trans {trans} uplo {uplo}", r[0], x, t)


def test_geev(t):
    n = 4
    a = rand((n, n), t, 15)
    target = f"lapack_{LETTER[t]}geev_ffi"
    cplx = np.issubdtype(t, np.complexfloating)
    c = np.complex64 if REAL[t] == np.float32 else np.complex128
    eig = [((n,), t, False)] * (1 if cplx else 2)
    r = run(target, program(target, [((n, n), t, True)],
                            eig + [((n, n), c, True), ((n, n), c, True), ((), np.int32, False)],
                            {"compute_left": u8("N"), "compute_right": u8("V")}, aliases=()), [a])
    ref = lapack_fn("geev", t)(a, compute_vl=0, compute_vr=1)
    if cplx:
        w, _, vr, info = ref
        check(target + " w", r[0], w, t)
    else:
        wr, wi, _, vr_packed, info = ref
        check(target + " wr", r[0], wr, t)
        check(target + " wi", r[1], wi, t)
        w = wr + 1j * wi
    vecs = r[-2]
    # The right eigenvectors: A v = w v, unit norm, as LAPACK normalizes.
    resid = np.abs(a @ vecs - vecs * w[None, :]).max()
    if not resid <= 1e3 * np.finfo(REAL[t]).eps * np.abs(a).max():
        FAILURES.append(f"{target}: A v != w v (residual {resid:.3g})")
    check(target + " info", r[-1], info, t)


TPU_PROGRAM = """module @jit_tpu attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x3xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x4xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4x4xf32>, tensor<4xf32>) {
    %0:2 = stablehlo.custom_call @Qr(%arg0) {api_version = 1 : i32} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3xf32>)
    %1 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%0#0, %0#1) {api_version = 1 : i32} : (tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
    %2:3 = stablehlo.custom_call @LuDecomposition(%arg1) : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>)
    %3:2 = stablehlo.custom_call @Eigh(%arg2) {api_version = 1 : i32, backend_config = "1,1,100,1e-6"} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>)
    return %0#0, %1, %2#0, %2#1, %2#2, %3#0, %3#1 : tensor<5x3xf32>, tensor<5x3xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4x4xf32>, tensor<4xf32>
  }
}
"""


def test_tpu_targets():
    a = rand((5, 3), np.float32, 20)
    b = rand((4, 4), np.float32, 21)
    h = hermitian(4, np.float32, 22)
    r = run("tpu", TPU_PROGRAM, [a, b, h])
    tol = 1e-4
    q, rr = r[1], np.triu(r[0][:3])
    if not np.allclose(q @ rr, a, atol=tol):
        FAILURES.append("tpu: Q R != A")
    if not np.allclose(q.T @ q, np.eye(3), atol=tol):
        FAILURES.append("tpu: Q not orthonormal")
    lu, piv, perm = r[2], r[3], r[4]
    l, u = np.tril(lu, -1) + np.eye(4), np.triu(lu)
    if not np.allclose(l @ u, b[perm], atol=tol):
        FAILURES.append("tpu: A[perm] != L U")
    expect = np.arange(4)
    for i, p in enumerate(piv):
        expect[[i, p]] = expect[[p, i]]
    if not (perm == expect).all():
        FAILURES.append(f"tpu: permutation {perm} does not follow pivots {piv}")
    v, w = r[5], r[6]
    if not np.allclose(w, np.linalg.eigvalsh(h), rtol=tol, atol=tol):
        FAILURES.append(f"tpu: eigenvalues {w} != numpy's {np.linalg.eigvalsh(h)}")
    if not np.allclose(v @ np.diag(w) @ v.T, h, atol=1e-3):
        FAILURES.append("tpu: V diag(w) V^T != A")


def main():
    for t in TYPES:
        for test in (test_getrf, test_geqrf_orgqr, test_syevd, test_gesdd, test_potrf, test_gees,
                     test_gehrd, test_sytrd, test_gtsv, test_trsm, test_geev):
            try:
                test(t)
            except Exception as e:  # a failed run is one failure, not the end
                FAILURES.append(f"{test.__name__}[{t.__name__}]: {e}")
    try:
        test_tpu_targets()
    except Exception as e:
        FAILURES.append(f"test_tpu_targets: {e}")
    for f in FAILURES:
        print("FAIL:", f)
    if FAILURES:
        print(f"lapack_test: {len(FAILURES)} failure(s); programs and results in {WORK}")
        sys.exit(1)
    shutil.rmtree(WORK)
    print("lapack_test: all passed")


if __name__ == "__main__":
    main()
