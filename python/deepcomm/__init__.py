"""DeepComm from Python: communicators from the launcher's environment, all-reduce and compressed
all-reduce of numpy arrays, over ctypes and libdeepcomm.so (no compiled extension).

    import numpy as np, deepcomm
    comm = deepcomm.Comm.from_env()                  # under deepcomm-run, mpirun or torchrun
    grad = np.ones(1000, np.float32)
    comm.all_reduce(grad, op="avg")                  # in place
    residual = deepcomm.Residual(grad.size)          # error feedback of this buffer, kept across calls
    stats = comm.compressed_all_reduce(grad, "topk:0.01,q8,huffman,ef", residual, op="avg").as_dict()
    with deepcomm.group():                           # several calls, one wait
        ...

The library is DEEPCOMM_LIBRARY when set, else the package's own libdeepcomm.so.0 (a pip-installed
wheel has one), else libdeepcomm.so.0 from the loader's path. deepcomm.torch is the PyTorch backend
(docs/pytorch.md); its compiled part may sit in another directory of the same package on sys.path
(a build tree's python/), hence the extended __path__. Errors
raise deepcomm.Error with the library's code and message; specs are docs/configuration.md's.
"""
import contextlib
import ctypes
import os
import pkgutil

import numpy as np

__path__ = pkgutil.extend_path(__path__, __name__)

__all__ = ["Comm", "Residual", "Error", "group", "library"]

_DTYPES = {
    np.dtype(np.int8): 0, np.dtype(np.uint8): 1, np.dtype(np.int32): 2, np.dtype(np.uint32): 3,
    np.dtype(np.int64): 4, np.dtype(np.uint64): 5, np.dtype(np.float16): 6, np.dtype(np.float32): 7,
    np.dtype(np.float64): 8,
}
_OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3, "avg": 4}
_RESULTS = {1: "unhandled cuda error", 2: "system error", 3: "internal error", 4: "invalid argument",
            5: "invalid usage", 6: "remote error", 7: "in progress"}


class Error(RuntimeError):
    """A DeepComm call failed: code is the dcResult_t, the message the library's."""

    def __init__(self, code, message):
        super().__init__(f"{_RESULTS.get(code, code)}: {message}")
        self.code = code


class CompressStats(ctypes.Structure):
    """dcCompressStats_t."""
    _fields_ = [("rawBytes", ctypes.c_uint64), ("wireBytes", ctypes.c_uint64), ("ratio", ctypes.c_double),
                ("messages", ctypes.c_uint64), ("selectSeconds", ctypes.c_double),
                ("encodeSeconds", ctypes.c_double), ("decodeSeconds", ctypes.c_double),
                ("accumulateSeconds", ctypes.c_double), ("totalSeconds", ctypes.c_double),
                ("algorithm", ctypes.c_char * 24)]

    def as_dict(self):
        return {name: (getattr(self, name).decode() if name == "algorithm" else getattr(self, name))
                for name, _ in self._fields_}


class Counters(ctypes.Structure):
    """dcCounters_t."""
    _fields_ = [(name, ctypes.c_uint64) for name in ("shmBytesSent", "shmBytesReceived", "tcpBytesSent",
                                                     "tcpBytesReceived", "shmBytesStaged", "shmBytesFromRegistered")]


def _load():
    own = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libdeepcomm.so.0")
    lib = ctypes.CDLL(os.environ.get("DEEPCOMM_LIBRARY", own if os.path.exists(own) else "libdeepcomm.so.0"))
    p, size, i32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    signatures = {
        "dcGetLastError": ([], ctypes.c_char_p),
        "dcCommInitFromEnv": ([ctypes.POINTER(p), p], i32),
        "dcCommDestroy": ([p], i32),
        "dcCommRank": ([p, ctypes.POINTER(i32)], i32),
        "dcCommCount": ([p, ctypes.POINTER(i32)], i32),
        "dcCommGetCounters": ([p, ctypes.POINTER(Counters)], i32),
        "dcCommResetCompression": ([p], i32),
        "dcAllReduce": ([p, p, size, i32, i32, p, p], i32),
        "dcCompressedAllReduce": ([p, p, size, i32, i32, ctypes.c_char_p, p, p, p, ctypes.POINTER(CompressStats)], i32),
        "dcResidualCreate": ([ctypes.POINTER(p), size], i32),
        "dcResidualReset": ([p], i32),
        "dcResidualDestroy": ([p], i32),
        "dcGroupStart": ([], i32),
        "dcGroupEnd": ([], i32),
    }
    for name, (args, result) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, result
    return lib


library = _load()


def _check(code):
    if code != 0:
        raise Error(code, library.dcGetLastError().decode(errors="replace"))


def _buffer(array, what):
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
        raise TypeError(f"{what} must be a C-contiguous numpy array")
    if array.dtype not in _DTYPES:
        raise TypeError(f"{what}: DeepComm has no datatype for numpy {array.dtype}")
    return array.ctypes.data_as(ctypes.c_void_p)


def _op(op):
    if op not in _OPS:
        raise ValueError(f"unknown op {op!r} (expected one of {', '.join(_OPS)})")
    return _OPS[op]


def _out(array, out):
    if out is None:
        return array
    if out.shape != array.shape or out.dtype != array.dtype:
        raise ValueError("out must have the input's shape and dtype")
    return out


# Statistics of compressed calls inside a group are written when it ends: kept alive until then.
_group_depth = 0
_group_stats = []


@contextlib.contextmanager
def group():
    """Calls inside complete together at the end of the block (dcGroupStart/dcGroupEnd); their
    buffers must stay untouched until then."""
    global _group_depth
    _check(library.dcGroupStart())
    _group_depth += 1
    try:
        yield
    finally:
        _group_depth -= 1
        try:
            _check(library.dcGroupEnd())
        finally:
            if _group_depth == 0:
                _group_stats.clear()


class Residual:
    """Error-feedback state of one buffer of `count` elements (float32 whatever the buffer's type),
    kept across compressed all-reduces of that buffer."""

    def __init__(self, count):
        self._handle = ctypes.c_void_p()
        _check(library.dcResidualCreate(ctypes.byref(self._handle), count))
        self.count = count

    def reset(self):
        _check(library.dcResidualReset(self._handle))

    def close(self):
        if self._handle:
            _check(library.dcResidualDestroy(self._handle))
            self._handle = ctypes.c_void_p()

    def __del__(self):
        if getattr(self, "_handle", None):
            library.dcResidualDestroy(self._handle)


class Comm:
    """One rank's communicator."""

    def __init__(self, handle):
        self._handle = handle
        value = ctypes.c_int()
        _check(library.dcCommRank(handle, ctypes.byref(value)))
        self.rank = value.value
        _check(library.dcCommCount(handle, ctypes.byref(value)))
        self.size = value.value

    @classmethod
    def from_env(cls):
        """Rank and size from deepcomm-run (DEEPCOMM_RANK, ...), PMIx (mpirun, srun) or torchrun."""
        handle = ctypes.c_void_p()
        _check(library.dcCommInitFromEnv(ctypes.byref(handle), None))
        return cls(handle)

    def all_reduce(self, array, op="sum", out=None):
        """Reduces array over the ranks into out (default: array itself); returns out."""
        out = _out(array, out)
        _check(library.dcAllReduce(_buffer(array, "array"), _buffer(out, "out"), array.size,
                                   _DTYPES[array.dtype], _op(op), self._handle, None))
        return out

    def compressed_all_reduce(self, array, spec, residual=None, op="sum", out=None):
        """Compressed all-reduce (float32 or float16; sum or avg) with a spec such as
        "topk:0.01,q8,huffman,ef"; a spec with ef needs this buffer's Residual. Returns the call's
        statistics (CompressStats: raw and wire bytes, ratio, seconds in the codecs, algorithm;
        .as_dict()), filled when the call completes: inside a group, when the group ends."""
        out = _out(array, out)
        stats = CompressStats()
        if _group_depth:
            _group_stats.append(stats)
        handle = residual._handle if residual is not None else None
        _check(library.dcCompressedAllReduce(_buffer(array, "array"), _buffer(out, "out"), array.size,
                                             _DTYPES[array.dtype], _op(op), spec.encode(), handle,
                                             self._handle, None, ctypes.byref(stats)))
        return stats

    def counters(self):
        """Bytes this rank moved, per transport (dcCommGetCounters)."""
        c = Counters()
        _check(library.dcCommGetCounters(self._handle, ctypes.byref(c)))
        return {name: getattr(c, name) for name, _ in c._fields_}

    def reset_compression(self):
        """Drops the error feedback DEEPCOMM_COMPRESS keeps for this communicator's buffers."""
        _check(library.dcCommResetCompression(self._handle))

    def close(self):
        if self._handle:
            _check(library.dcCommDestroy(self._handle))
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
