"""torch from PyPI (which pins NVIDIA's NCCL 2.30.7) imports with DeepComm's libnccl.so.2 in
LD_PRELOAD and reports DeepComm's NCCL version, and every nccl* function that libtorch_cuda.so
imports is bound to DeepComm's library (the loader's own account, LD_DEBUG=bindings). torch also
maps NVIDIA's copy from its wheel (ctypes, RTLD_LOCAL); nothing of torch's is bound to it.

Usage: torch_preload_test.py <DeepComm's libnccl.so.2>. Exits 77 (skipped) when this Python has no
torch, saying so."""
import glob
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

SKIPPED = 77
CHILD = "import torch; print('version', torch.cuda.nccl.version()); print('torch', torch.__file__)"
BINDING = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol `(p?nccl\w+)'")


def imported_nccl_functions(library):
    nm = subprocess.run(["nm", "-D", "--undefined-only", library], capture_output=True, text=True,
                        check=True)
    return {fields[-1].split("@")[0] for fields in map(str.split, nm.stdout.splitlines())
            if fields and re.match(r"p?nccl", fields[-1])}


def main():
    ours = os.path.realpath(sys.argv[1])
    spec = importlib.util.find_spec("torch")
    if spec is None:
        print(f"SKIPPED: {sys.executable} has no torch (pip install torch to run this test)")
        return SKIPPED
    libtorch_cuda = os.path.join(os.path.dirname(spec.origin), "lib", "libtorch_cuda.so")
    if not os.path.exists(libtorch_cuda):
        print(f"SKIPPED: this torch has no {libtorch_cuda} (a CPU-only build uses no NCCL)")
        return SKIPPED
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, LD_PRELOAD=ours, LD_BIND_NOW="1", LD_DEBUG="bindings",
                   LD_DEBUG_OUTPUT=os.path.join(scratch, "ld"))
        child = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                               text=True, timeout=240)
        print(child.stdout, end="")
        if child.returncode != 0:
            print(child.stderr, file=sys.stderr)
            return 1
        bound = {}  # function libtorch_cuda imports -> file it was bound to
        for log in glob.glob(os.path.join(scratch, "ld.*")):
            with open(log, errors="replace") as lines:
                for line in lines:
                    match = BINDING.search(line)
                    if match and os.path.realpath(match[1]) == os.path.realpath(libtorch_cuda):
                        bound[match[3]] = os.path.realpath(match[2])
    assert "version (2, 30, 7)" in child.stdout, child.stdout
    imported = imported_nccl_functions(libtorch_cuda)
    print(f"libtorch_cuda.so imports {len(imported)} nccl functions; bound:",
          {path: sum(1 for p in bound.values() if p == path) for path in set(bound.values())})
    assert imported and set(bound) == imported, sorted(imported ^ set(bound))
    assert set(bound.values()) == {ours}, set(bound.values())
    return 0


if __name__ == "__main__":
    sys.exit(main())
