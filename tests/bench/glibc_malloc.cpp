// Hands malloc, free and operator new back to glibc's allocator when preloaded (LD_PRELOAD) into
// Switchyard, which links jemalloc: the other side of scripts/bench-duel.sh's allocator comparison
// (docs/benchmarks.md). Every allocation and release of the process goes to glibc's own
// functions, so memory never crosses from one allocator to the other.
#include <cerrno>
#include <cstddef>
#include <new>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void __libc_free(void *pointer);
void *__libc_memalign(size_t alignment, size_t size);
size_t __malloc_usable_size(void *pointer);

void *malloc(size_t size)
{
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size)
{
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size)
{
    return __libc_realloc(pointer, size);
}

void free(void *pointer)
{
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size)
{
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size)
{
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == nullptr)
        return ENOMEM;
    *result = pointer;
    return 0;
}

size_t malloc_usable_size(void *pointer)
{
    return __malloc_usable_size(pointer);
}
} // extern "C"

// jemalloc defines operator new and delete itself; these take them back.
void *operator new(size_t size)
{
    if (void *pointer = __libc_malloc(size))
        return pointer;
    throw std::bad_alloc();
}

void *operator new[](size_t size)
{
    return operator new(size);
}

void *operator new(size_t size, const std::nothrow_t &) noexcept
{
    return __libc_malloc(size);
}

void *operator new[](size_t size, const std::nothrow_t &) noexcept
{
    return __libc_malloc(size);
}

void *operator new(size_t size, std::align_val_t alignment)
{
    if (void *pointer = __libc_memalign(size_t(alignment), size))
        return pointer;
    throw std::bad_alloc();
}

void *operator new[](size_t size, std::align_val_t alignment)
{
    return operator new(size, alignment);
}

void operator delete(void *pointer) noexcept
{
    __libc_free(pointer);
}

void operator delete[](void *pointer) noexcept
{
    __libc_free(pointer);
}

void operator delete(void *pointer, size_t) noexcept
{
    __libc_free(pointer);
}

void operator delete[](void *pointer, size_t) noexcept
{
    __libc_free(pointer);
}

void operator delete(void *pointer, std::align_val_t) noexcept
{
    __libc_free(pointer);
}

void operator delete[](void *pointer, std::align_val_t) noexcept
{
    __libc_free(pointer);
}

void operator delete(void *pointer, size_t, std::align_val_t) noexcept
{
    __libc_free(pointer);
}

void operator delete[](void *pointer, size_t, std::align_val_t) noexcept
{
    __libc_free(pointer);
}
