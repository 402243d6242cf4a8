"""Which sgemm kernel a benchmark's runs use (bench/README.md, "The GEMM
kernel").

Debian's OpenBLAS 0.3.21 picks its kernel for the CPU when it loads. On a
CPU newer than its table (an Intel Xeon of model 207 here) it falls back
to its generic Prescott (SSE3) kernel, whose GEMMs run at about a quarter
of the core's rate: a benchmark's every step, shardc's and PyTorch's
alike, then measures that fallback rather than the machine.
"""
import os
import subprocess


def openblas_core(shardc):
    """The GEMM kernel OpenBLAS picked for this CPU, as it says at load."""
    env = dict(os.environ, OPENBLAS_VERBOSE="2")
    run = subprocess.run([shardc, "--version"], env=env, capture_output=True,
                         text=True)
    out = run.stdout + run.stderr
    for line in out.splitlines():
        if line.startswith("Core: "):
            return line.split(":", 1)[1].strip()
    return None


def kernel_for_cpu_flags():
    """The OpenBLAS core type the CPU's vector units run: what a CPU newer
    than the library's table should get instead of its generic fallback."""
    try:
        flags = open("/proc/cpuinfo").read().split()
    except OSError:
        return None
    if "avx512f" in flags:
        return "SkylakeX"
    if "avx2" in flags:
        return "Haswell"
    return None


def choose_openblas_core(shardc, keep):
    """Unless `keep` or the caller set OPENBLAS_CORETYPE, replaces
    OpenBLAS's Prescott fallback, for every run the benchmark starts from
    now on (PyTorch's too: they share the library), by the kernel of the
    CPU's vector units. Returns the line to print."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return ("OpenBLAS core: %s (OPENBLAS_CORETYPE, as given)" %
                os.environ["OPENBLAS_CORETYPE"])
    core = openblas_core(shardc)
    better = kernel_for_cpu_flags()
    if keep or core != "Prescott" or not better:
        return f"OpenBLAS core: {core or 'not reported'} (the library's choice)"
    os.environ["OPENBLAS_CORETYPE"] = better
    return (f"OpenBLAS core: {better} for every run (OPENBLAS_CORETYPE): the "
            f"library's choice on this CPU was its generic Prescott kernel; "
            f"--openblas-core as-is keeps it")


def add_openblas_core_option(parser):
    """The benchmarks' --openblas-core: auto (the default) or as-is."""
    parser.add_argument("--openblas-core", choices=["auto", "as-is"],
                        default="auto",
                        help="auto: where OpenBLAS falls back to its generic "
                             "Prescott kernel on a CPU with AVX2 or AVX-512 "
                             "(a CPU newer than its table), every run uses "
                             "the CPU's kernel instead (OPENBLAS_CORETYPE); "
                             "as-is: the library's choice")
