#!/usr/bin/python3
"""NumPy and SciPy (Debian's builds, which link libblas.so.3) running on strata's drop-in.

Run with LD_LIBRARY_PATH=<blas-dropin dir>:<reference lapack dir>. The script first proves
that the libblas.so.3 mapped into the process is strata's, then checks BLAS-backed NumPy
and SciPy results against references that do not use BLAS (elementwise products summed
with math.fsum-like accuracy through float128/complex256 numpy loops) and LAPACK results
by their residuals. Exit 0 = pass, 77 = numpy/scipy not installed (skip), 1 = failure.
"""
import os
import sys

try:
    import numpy as np
    import scipy.linalg as sla
    from scipy.linalg import blas as sblas
except ImportError as e:  # the setup script installs them; without them there is nothing to run
    print(f"skip: {e}")
    sys.exit(77)

failures = []


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}")
    if not ok:
        failures.append(name)


def loaded_blas():
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if "libblas" in line or "openblas" in line})


libs = loaded_blas()
dropin = os.environ.get("STRATA_DROPIN_DIR", "")
check("libblas.so.3 is strata's", any(dropin and p.startswith(dropin) for p in libs) and
      not any("openblas" in p for p in libs), str(libs))

rng = np.random.default_rng(7)


def rand(shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def exact_matmul(a, b):
    """a @ b without BLAS: broadcasted products summed in extended precision."""
    wide = np.clongdouble if np.iscomplexobj(a) else np.longdouble
    return (a.astype(wide)[:, :, None] * b.astype(wide)[None, :, :]).sum(axis=1)


def rel_err(got, want):
    want = np.asarray(want)
    scale = np.abs(want).max() if want.size else 1.0
    return float(np.abs(np.asarray(got) - want).max() / max(scale, 1e-300)) if want.size else 0.0


tol = {np.float32: 2e-5, np.float64: 1e-13, np.complex64: 2e-5, np.complex128: 1e-13}

# np.dot / matmul: gemm and gemv, contiguous, transposed and strided views.
for dtype in (np.float32, np.float64, np.complex64, np.complex128):
    for m, k, n in [(1, 1, 1), (7, 13, 5), (64, 64, 64), (130, 67, 97), (1, 300, 257), (300, 1, 2)]:
        a, b = rand((m, k), dtype), rand((k, n), dtype)
        check(f"matmul {np.dtype(dtype).name} {m}x{k}x{n}", rel_err(a @ b, exact_matmul(a, b)) < tol[dtype])
    a = rand((90, 70), dtype)
    b = rand((90, 50), dtype)
    check(f"matmul {np.dtype(dtype).name} a.T @ b", rel_err(a.T @ b, exact_matmul(a.T, b)) < tol[dtype])
    big = rand((120, 160), dtype)
    v = big[::2, ::3]  # non-unit strides: numpy copies or passes lda
    w = rand((v.shape[1], 33), dtype)
    check(f"matmul {np.dtype(dtype).name} strided view", rel_err(v @ w, exact_matmul(v, w)) < tol[dtype])
    x = rand((70,), dtype)
    check(f"gemv {np.dtype(dtype).name}", rel_err(a.T @ b[:, 0], exact_matmul(a.T, b[:, :1])[:, 0]) < tol[dtype])
    check(f"vdot {np.dtype(dtype).name}", rel_err(np.vdot(x, x), (np.conj(x.astype(np.clongdouble)) * x).sum())
          < tol[dtype])

# NaN in C must not leak when beta == 0 (numpy's out= path calls gemm with beta = 0).
out = np.full((8, 8), np.nan)
np.matmul(np.ones((8, 4)), np.ones((4, 8)), out=out)
check("beta=0 ignores NaN in the output", np.all(out == 4.0))

# scipy.linalg.blas: the Level 3 routines with their options, against the exact product.
for prefix, dtype in (("s", np.float32), ("d", np.float64), ("c", np.complex64), ("z", np.complex128)):
    get = lambda name: sblas.get_blas_funcs(name, dtype=dtype)
    a, b, c = rand((40, 30), dtype), rand((30, 50), dtype), rand((40, 50), dtype)
    got = get("gemm")(alpha=2.0, a=a, b=b, beta=0.5, c=c)
    check(f"{prefix}gemm alpha/beta", rel_err(got, 2 * exact_matmul(a, b) + 0.5 * c) < tol[dtype])
    got = get("gemm")(1.0, a, a, trans_b=True if prefix in "sd" else 2)
    want = exact_matmul(a, a.T if prefix in "sd" else a.conj().T)
    check(f"{prefix}gemm op(B)", rel_err(got, want) < tol[dtype])
    s = rand((30, 30), dtype)
    s = s + s.T
    got = get("symm")(1.0, s, b)
    check(f"{prefix}symm", rel_err(got, exact_matmul(s, b)) < tol[dtype])
    got = get("syrk")(1.0, a)  # upper triangle of a a^T
    check(f"{prefix}syrk upper", rel_err(np.triu(got), np.triu(exact_matmul(a, a.T))) < tol[dtype])
    t = np.triu(rand((30, 30), dtype)) + 30 * np.eye(30, dtype=dtype)
    x = get("trsm")(1.0, t, b)
    check(f"{prefix}trsm", rel_err(exact_matmul(t, x), b) < 100 * tol[dtype])
    if prefix in "cz":
        h = s + s.conj().T
        got = get("hemm")(1.0, h, b)
        check(f"{prefix}hemm", rel_err(got, exact_matmul(h, b)) < tol[dtype])
        got = get("herk")(1.0, a)
        check(f"{prefix}herk upper", rel_err(np.triu(got), np.triu(exact_matmul(a, a.conj().T))) < tol[dtype])
    v = rand((30,), dtype)
    check(f"{prefix}nrm2", rel_err(get("nrm2")(v), np.sqrt((np.abs(v.astype(np.clongdouble)) ** 2).sum()))
          < tol[dtype])
    check(f"{prefix}nrm2 no overflow", np.isfinite(get("nrm2")(np.full(4, 1e30 if prefix in "sc" else 1e300,
                                                                       dtype=dtype))))

# LAPACK (reference liblapack.so.3) on strata's BLAS: residuals of the factorisations.
for dtype in (np.float32, np.float64, np.complex64, np.complex128):
    n = 150
    eps = np.finfo(dtype).eps
    a = rand((n, n), dtype)
    b = rand((n, 3), dtype)
    x = np.linalg.solve(a, b)
    check(f"solve {np.dtype(dtype).name}", rel_err(exact_matmul(a, x), b) < 1e4 * eps)
    inv = np.linalg.inv(a)
    check(f"inv {np.dtype(dtype).name}", rel_err(exact_matmul(a, inv), np.eye(n)) < 1e4 * eps)
    h = a @ a.conj().T + n * np.eye(n, dtype=dtype)
    w, v = np.linalg.eigh(h)
    check(f"eigh {np.dtype(dtype).name}", rel_err(exact_matmul(h, v), v * w) < 1e3 * eps)
    u, s, vt = np.linalg.svd(a)
    check(f"svd {np.dtype(dtype).name}", rel_err(exact_matmul(u * s, vt), a) < 1e3 * eps)
    l = np.linalg.cholesky(h)
    check(f"cholesky {np.dtype(dtype).name}", rel_err(exact_matmul(l, l.conj().T), h) < 1e3 * eps)
    q, r = sla.qr(a)
    check(f"scipy qr {np.dtype(dtype).name}", rel_err(exact_matmul(q, r), a) < 1e3 * eps)
    lu, piv = sla.lu_factor(a)
    check(f"scipy lu_solve {np.dtype(dtype).name}", rel_err(exact_matmul(a, sla.lu_solve((lu, piv), b)), b) < 1e4 * eps)
    sol, *_ = np.linalg.lstsq(a[:, :40], b, rcond=None)
    resid = b - exact_matmul(a[:, :40], sol)
    normal = np.abs(exact_matmul(a[:, :40].conj().T, resid)).max()
    check(f"lstsq normal equations {np.dtype(dtype).name}", normal < 1e4 * eps * np.abs(a).max() * np.abs(b).max())

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
