#include "open_files_limit.h"

#include <cerrno>
#include <cstring>
#include <sys/resource.h>

namespace switchyard::app {

namespace {

qint64 shown(rlim_t limit)
{
    return limit == RLIM_INFINITY ? -1 : qint64(limit);
}

} // namespace

OpenFilesLimit raiseOpenFilesLimit()
{
    OpenFilesLimit result;
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        result.error = QString::fromLocal8Bit(std::strerror(errno));
        return result;
    }
    result.before = result.now = shown(limit.rlim_cur);
    result.hard = shown(limit.rlim_max);
    if (limit.rlim_cur == limit.rlim_max)
        return result;
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) {
        result.error = QString::fromLocal8Bit(std::strerror(errno));
        return result;
    }
    result.now = shown(raised.rlim_cur);
    return result;
}

} // namespace switchyard::app
