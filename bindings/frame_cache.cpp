// A cache of the interpreter's frame-stack chunks while a kernel compiles.
//
// CPython 3.11+ keeps Python frames on a per-thread stack of chunks (16 KiB each) that it
// takes from, and gives back to, the object arena allocator: a chunk is unmapped as soon as
// the last frame in it returns. Deeply recursive code whose depth keeps crossing a chunk's
// edge maps and unmaps a chunk on every call there. numba's inliner copies the callee's IR
// with copy.deepcopy at every call site, and a first compile of the analytic IK kernels made
// 0.07-0.7 million such mmap/munmap pairs (several seconds) depending on how deep in the
// caller's stack the compile happened to start.
//
// While `frame_cache_start()` is in effect, the arena allocator is wrapped: small blocks (the
// chunks; not pymalloc's 1 MiB arenas) that are given back are kept in a short list and handed
// out again, and everything else goes to the allocator that was in place. Every block comes
// from that allocator and returns to it, so the wrapper can be removed at any time:
// `frame_cache_stop()` gives the kept blocks back and puts the previous allocator back (or,
// when something installed another allocator over this one meanwhile, leaves the wrapper in
// place passing everything through). The interpreter calls the arena allocator with the GIL
// held; a free-threaded build is left alone.
#include <Python.h>

#include <cstddef>

#include "common.hpp"

namespace ikstack_py {

namespace {

constexpr int kSlots = 64;                // at most 64 kept blocks
constexpr size_t kLargest = 64 * 1024;    // of at most 64 KiB each (chunks are 16 KiB)

struct FrameCache {
    PyObjectArenaAllocator previous{};
    bool installed = false;  // the wrapper is (or was left) installed
    bool caching = false;    // blocks given back are kept
    int depth = 0;           // nested start() calls
    void* block[kSlots]{};
    size_t size[kSlots]{};
    int kept = 0;
    long long reused = 0;    // blocks handed out again since the process started
};

FrameCache cache;

void* cached_alloc(void*, size_t size) {
    for (int i = cache.kept - 1; i >= 0; --i) {
        if (cache.size[i] == size) {
            void* p = cache.block[i];
            --cache.kept;
            cache.block[i] = cache.block[cache.kept];
            cache.size[i] = cache.size[cache.kept];
            ++cache.reused;
            return p;
        }
    }
    return cache.previous.alloc(cache.previous.ctx, size);
}

void cached_free(void*, void* p, size_t size) {
    if (cache.caching && size <= kLargest && cache.kept < kSlots) {
        cache.block[cache.kept] = p;
        cache.size[cache.kept] = size;
        ++cache.kept;
        return;
    }
    cache.previous.free(cache.previous.ctx, p, size);
}

bool ours_in_place() {
    PyObjectArenaAllocator now{};
    PyObject_GetArenaAllocator(&now);
    return now.alloc == cached_alloc;
}

void give_back_kept() {
    while (cache.kept > 0) {
        --cache.kept;
        cache.previous.free(cache.previous.ctx, cache.block[cache.kept], cache.size[cache.kept]);
    }
}

#ifdef Py_GIL_DISABLED
constexpr bool kSupported = false;
#else
constexpr bool kSupported = true;
#endif

}  // namespace

void bind_frame_cache(nb::module_& m) {
    m.def(
        "frame_cache_start",
        []() -> bool {
            if (!kSupported) return false;
            if (cache.depth++ > 0) return cache.caching;
            if (!cache.installed) {
                PyObject_GetArenaAllocator(&cache.previous);
                PyObjectArenaAllocator wrapper{nullptr, cached_alloc, cached_free};
                PyObject_SetArenaAllocator(&wrapper);
                cache.installed = true;
            }
            cache.caching = true;
            return true;
        },
        "Keep the interpreter's frame-stack chunks for reuse (nested calls count); True when "
        "the cache is on.");
    m.def(
        "frame_cache_stop",
        []() {
            if (!kSupported || cache.depth == 0) return;
            if (--cache.depth > 0) return;
            cache.caching = false;
            give_back_kept();
            if (cache.installed && ours_in_place()) {
                PyObject_SetArenaAllocator(&cache.previous);
                cache.installed = false;
            }
        },
        "End one frame_cache_start(): the last one gives every kept block back and puts the "
        "previous arena allocator back.");
    m.def(
        "frame_cache_state",
        []() {
            nb::dict d;
            d["supported"] = kSupported;
            d["caching"] = cache.caching;
            d["installed"] = cache.installed && ours_in_place();
            d["kept"] = cache.kept;
            d["reused"] = cache.reused;
            return d;
        },
        "{'supported', 'caching', 'installed', 'kept', 'reused'}: the frame cache's state.");
}

}  // namespace ikstack_py
