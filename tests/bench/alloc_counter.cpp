// Counts the heap allocations of the process it is preloaded into (LD_PRELOAD), for
// scripts/bench-nginx.sh: allocations per request, every thread together.
//
// malloc, calloc, realloc and the aligned allocators are counted, then passed to glibc's own
// (__libc_*); operator new and Qt's containers allocate through malloc, so they are counted too.
// free is not interposed. A thread of the library writes the count, in decimal, to the file named
// by SWITCHYARD_BENCH_ALLOC_FILE every 20 ms; the benchmark reads it before and after a
// measured run. Without that variable the library only counts.
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
}

namespace {

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
    count();
    return __libc_malloc(size);
}

void *calloc(size_t members, size_t size)
{
    count();
    return __libc_calloc(members, size);
}

void *realloc(void *pointer, size_t size)
{
    count();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size)
{
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size)
{
    count();
    if (alignment == 0 || alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == nullptr)
        return ENOMEM;
    *result = pointer;
    return 0;
}

} // extern "C"
