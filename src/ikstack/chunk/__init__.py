"""Action-chunk decoding: Cartesian TCP knots to joint knots for several arms, accepted or
rejected whole; SE(3) subdivision for the diff (velocity QP) method, the lag guard, per-chunk
solver reset, persistent per-arm worker processes, YAML embodiment profiles, and a timeline
commit helper."""

from ikstack._deprecated import renamed_module_names
from ikstack.chunk.arm_decoder import (
    DEFAULT_IK_VALIDATION_DT_S,
    AnalyticDecodeConfig,
    ArmDecodeConfig,
    ArmDecoder,
)
from ikstack.chunk.decode import ArmSpec, ChunkDecoder, merge_results
from ikstack.chunk.files import decode_file, read_chunk, summarize
from ikstack.chunk.parallel import ParallelChunkDecoder, PendingChunk, WorkerError
from ikstack.chunk.profile import EmbodimentProfile, bundled_profile_path, load_profile
from ikstack.chunk.types import (
    ArmDecodeResult,
    ChunkRejection,
    ChunkRequest,
    DecodedChunk,
    DecodeMethod,
    DecodeStatus,
    LagStats,
    TimelineSegment,
    commit_to_timeline,
)

__all__ = [
    "DEFAULT_IK_VALIDATION_DT_S",
    "AnalyticDecodeConfig",
    "ArmDecodeConfig",
    "ArmDecodeResult",
    "ArmDecoder",
    "ArmSpec",
    "ChunkDecoder",
    "ChunkRejection",
    "ChunkRequest",
    "DecodeMethod",
    "DecodeStatus",
    "DecodedChunk",
    "EmbodimentProfile",
    "LagStats",
    "ParallelChunkDecoder",
    "PendingChunk",
    "TimelineSegment",
    "WorkerError",
    "bundled_profile_path",
    "commit_to_timeline",
    "decode_file",
    "load_profile",
    "merge_results",
    "read_chunk",
    "summarize",
]

#: names renamed in this release, kept one release (they warn)
__getattr__ = renamed_module_names(
    __name__, {"AnalyticSettings": ("ikstack.chunk", "AnalyticDecodeConfig")}
)
