"""DeepComm's compressed all-reduce as a DDP communication hook (docs/pytorch.md):

    state = deepcomm.torch.CompressionState(None, "topk:0.01,q8,huffman,ef")   # the world group
    ddp.register_comm_hook(state, deepcomm.torch.compressed_allreduce_hook)

Each bucket keeps its own error-feedback residual (DeepComm's dcResidual_t) across iterations.
The first `start_iter` iterations all-reduce plainly: DDP rebuilds its buckets after the first
iteration, and a residual belongs to one bucket's layout. Buckets of other dtypes than float32,
float16 and bfloat16 are always all-reduced plainly. The group must be a deepcomm group."""
import torch
import torch.distributed as dist

from . import _C

__all__ = ["CompressionState", "compressed_allreduce_hook"]

_COMPRESSIBLE = (torch.float32, torch.float16, torch.bfloat16)


class CompressionState:
    """What the hook keeps across calls: the group, the spec (docs/configuration.md's grammar, the
    same on every rank), each bucket's residual, and statistics:
    - last_stats: bucket index -> dict of its latest compressed call (raw_bytes, wire_bytes,
      ratio, messages, select/encode/decode/accumulate/total seconds, algorithm);
    - totals: compressed calls, raw_bytes and wire_bytes summed, codec_seconds (select + encode +
      decode + accumulate) summed, plain_calls (the all-reduces before start_iter or of other
      dtypes)."""

    def __init__(self, process_group=None, spec="topk:0.01,q8,huffman,ef", start_iter=2):
        if start_iter < 0:
            raise ValueError(f"start_iter must be >= 0, got {start_iter}")
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.spec = spec
        self.start_iter = start_iter
        self.iter = 0
        self.residuals = {}
        self.last_stats = {}
        self.totals = {"calls": 0, "raw_bytes": 0, "wire_bytes": 0, "codec_seconds": 0.0, "plain_calls": 0}
        self._error_feedback = "ef" in (item.split(":")[0].strip() for item in spec.split(","))

    def reset_residuals(self):
        """Zeroes every bucket's error feedback (e.g. after the model was re-initialized)."""
        for residual in self.residuals.values():
            residual.reset()

    def _residual(self, index, numel):
        if not self._error_feedback:
            return None
        residual = self.residuals.get(index)
        if residual is None or residual.count != numel:  # a new bucket, or its layout changed
            residual = self.residuals[index] = _C.Residual(numel)
        return residual

    def _record(self, index, stats):
        entry = {name: getattr(stats, name) for name in (
            "raw_bytes", "wire_bytes", "ratio", "messages", "select_seconds", "encode_seconds", "decode_seconds",
            "accumulate_seconds", "total_seconds", "algorithm")}
        self.last_stats[index] = entry
        self.totals["calls"] += 1
        self.totals["raw_bytes"] += entry["raw_bytes"]
        self.totals["wire_bytes"] += entry["wire_bytes"]
        self.totals["codec_seconds"] += (entry["select_seconds"] + entry["encode_seconds"] + entry["decode_seconds"] +
                                         entry["accumulate_seconds"])


def compressed_allreduce_hook(state, bucket):
    """The DDP communication hook: the average of the bucket over the group, compressed with
    state.spec from iteration state.start_iter on."""
    buffer = bucket.buffer()
    index = bucket.index()
    compress = state.iter >= state.start_iter and buffer.dtype in _COMPRESSIBLE
    if bucket.is_last():
        state.iter += 1
    if not compress:
        state.totals["plain_calls"] += 1
        work = dist.all_reduce(buffer, dist.ReduceOp.AVG, group=state.process_group, async_op=True)
        return work.get_future().then(lambda fut: fut.value()[0])
    backend = state.process_group._get_backend(torch.device("cpu"))
    work, stats = _C.compressed_allreduce(backend, buffer, state.spec, state._residual(index, buffer.numel()), True)

    def finished(fut):
        result = fut.value()[0]  # raises the operation's error
        state._record(index, stats)
        return result

    return work.get_future().then(finished)
