// Counts the heap allocations of the process it is preloaded into (LD_PRELOAD), for
// scripts/bench-nginx.sh: allocations per request, every thread together.
//
// malloc, calloc, realloc and the aligned allocators are counted, then passed to the allocator
// next in line (dlsym's RTLD_NEXT): jemalloc in Switchyard, which links it ahead of the C library,
// glibc's in a process that does not. Qt's containers allocate through malloc. operator new and
// delete are defined here on top of this malloc and free: jemalloc defines its own, which bypass
// malloc and would go uncounted. A thread of the library writes the count, in decimal, to the file
// named by SWITCHYARD_BENCH_ALLOC_FILE every 20 ms; the benchmark reads it before and after a
// measured run. Without that variable the library only counts.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <new>
#include <pthread.h>
#include <unistd.h>

namespace {

using MallocFn = void *(*)(size_t);
using CallocFn = void *(*)(size_t, size_t);
using ReallocFn = void *(*)(void *, size_t);
using FreeFn = void (*)(void *);
using AlignedFn = void *(*)(size_t, size_t);
using PosixAlignedFn = int (*)(void **, size_t, size_t);

struct NextAllocator {
    MallocFn malloc = nullptr;
    CallocFn calloc = nullptr;
    ReallocFn realloc = nullptr;
    FreeFn free = nullptr;
    AlignedFn memalign = nullptr;
    AlignedFn alignedAlloc = nullptr;
    PosixAlignedFn posixMemalign = nullptr;
};
NextAllocator g_next;

// dlsym may allocate while it looks the next allocator up (glibc's error state): those few
// requests are served from this block and never freed, so the allocator being resolved is never
// called before it exists, and free() leaves these pointers alone.
alignas(64) char g_bootstrap[4096];
size_t g_bootstrapUsed = 0;
thread_local bool t_resolving = false;

void *bootstrapAllocate(size_t size)
{
    const size_t rounded = (size + 63) & ~size_t(63);
    if (g_bootstrapUsed + rounded > sizeof g_bootstrap)
        return nullptr;
    void *pointer = g_bootstrap + g_bootstrapUsed;
    g_bootstrapUsed += rounded;
    return pointer;
}

bool fromBootstrap(const void *pointer)
{
    return pointer >= g_bootstrap && pointer < g_bootstrap + sizeof g_bootstrap;
}

template <typename Fn>
Fn nextSymbol(const char *name)
{
    return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

// Resolved once, on the first allocation (before main, on one thread).
bool resolve()
{
    if (g_next.free != nullptr)
        return true;
    if (t_resolving)
        return false;
    t_resolving = true;
    g_next.malloc = nextSymbol<MallocFn>("malloc");
    g_next.calloc = nextSymbol<CallocFn>("calloc");
    g_next.realloc = nextSymbol<ReallocFn>("realloc");
    g_next.memalign = nextSymbol<AlignedFn>("memalign");
    g_next.alignedAlloc = nextSymbol<AlignedFn>("aligned_alloc");
    g_next.posixMemalign = nextSymbol<PosixAlignedFn>("posix_memalign");
    g_next.free = nextSymbol<FreeFn>("free");
    t_resolving = false;
    return g_next.free != nullptr;
}

std::atomic<unsigned long long> g_allocations{0};

void count()
{
    g_allocations.fetch_add(1, std::memory_order_relaxed);
}

void *reportLoop(void *path)
{
    const int fd = ::open(static_cast<const char *>(path), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return nullptr;
    char text[32];
    for (;;) {
        // Fixed width, so a shorter number never leaves digits of a longer one behind.
        const int length = std::snprintf(text, sizeof text, "%20llu\n",
                                         g_allocations.load(std::memory_order_relaxed));
        if (::pwrite(fd, text, size_t(length), 0) != length)
            break;
        ::usleep(20'000);
    }
    ::close(fd);
    return nullptr;
}

__attribute__((constructor)) void startReporting()
{
    const char *path = std::getenv("SWITCHYARD_BENCH_ALLOC_FILE");
    if (path == nullptr || *path == '\0')
        return;
    pthread_t thread;
    if (pthread_create(&thread, nullptr, reportLoop, const_cast<char *>(path)) == 0)
        pthread_detach(thread);
}

} // namespace

extern "C" {

void *malloc(size_t size)
{
    if (!resolve())
        return bootstrapAllocate(size);
    count();
    return g_next.malloc(size);
}

void *calloc(size_t members, size_t size)
{
    if (!resolve())
        return bootstrapAllocate(members * size); // the block is zeroed static storage
    count();
    return g_next.calloc(members, size);
}

void *realloc(void *pointer, size_t size)
{
    if (!resolve() || fromBootstrap(pointer)) {
        void *moved = resolve() ? g_next.malloc(size) : bootstrapAllocate(size);
        // A bootstrap block's size is not recorded: copy what the block can hold at most.
        if (moved != nullptr && pointer != nullptr) {
            const auto left =
                size_t(g_bootstrap + sizeof g_bootstrap - static_cast<char *>(pointer));
            std::memcpy(moved, pointer, std::min(size, left));
        }
        return moved;
    }
    count();
    return g_next.realloc(pointer, size);
}

void free(void *pointer)
{
    if (pointer == nullptr || fromBootstrap(pointer) || !resolve())
        return;
    g_next.free(pointer);
}

void *memalign(size_t alignment, size_t size)
{
    if (!resolve())
        return nullptr;
    count();
    return g_next.memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    if (!resolve())
        return nullptr;
    count();
    return g_next.alignedAlloc(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size)
{
    if (!resolve())
        return ENOMEM;
    count();
    return g_next.posixMemalign(result, alignment, size);
}

} // extern "C"

// Every form of operator new counts once, through malloc above; every delete frees through it.
void *operator new(size_t size)
{
    if (void *pointer = malloc(size))
        return pointer;
    throw std::bad_alloc();
}

void *operator new[](size_t size)
{
    return operator new(size);
}

void *operator new(size_t size, const std::nothrow_t &) noexcept
{
    return malloc(size);
}

void *operator new[](size_t size, const std::nothrow_t &) noexcept
{
    return malloc(size);
}

void *operator new(size_t size, std::align_val_t alignment)
{
    void *pointer = nullptr;
    if (posix_memalign(&pointer, std::max(size_t(alignment), sizeof(void *)), size) == 0)
        return pointer;
    throw std::bad_alloc();
}

void *operator new[](size_t size, std::align_val_t alignment)
{
    return operator new(size, alignment);
}

void operator delete(void *pointer) noexcept
{
    free(pointer);
}

void operator delete[](void *pointer) noexcept
{
    free(pointer);
}

void operator delete(void *pointer, size_t) noexcept
{
    free(pointer);
}

void operator delete[](void *pointer, size_t) noexcept
{
    free(pointer);
}

void operator delete(void *pointer, std::align_val_t) noexcept
{
    free(pointer);
}

void operator delete[](void *pointer, std::align_val_t) noexcept
{
    free(pointer);
}

void operator delete(void *pointer, size_t, std::align_val_t) noexcept
{
    free(pointer);
}

void operator delete[](void *pointer, size_t, std::align_val_t) noexcept
{
    free(pointer);
}
