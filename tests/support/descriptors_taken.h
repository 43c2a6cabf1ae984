#pragma once

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace switchyard::testing {

// Takes every descriptor this process may still open, as ten thousand held streams do, and
// gives them back when it goes. The open-file limit is lowered to 1,024 first, so that no more
// than about a thousand need taking.
class DescriptorsTaken {
public:
    DescriptorsTaken()
    {
        if (getrlimit(RLIMIT_NOFILE, &m_limit) != 0)
            return;
        rlimit lowered = m_limit;
        lowered.rlim_cur = std::min<rlim_t>(m_limit.rlim_cur, 1024);
        if (setrlimit(RLIMIT_NOFILE, &lowered) != 0)
            return;
        m_lowered = true;
        for (;;) {
            const int taken = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
            if (taken < 0) {
                m_full = errno == EMFILE;
                break;
            }
            m_taken.push_back(taken);
        }
    }
    ~DescriptorsTaken()
    {
        for (const int taken : m_taken)
            ::close(taken);
        if (m_lowered)
            setrlimit(RLIMIT_NOFILE, &m_limit);
    }
    DescriptorsTaken(const DescriptorsTaken &) = delete;
    DescriptorsTaken &operator=(const DescriptorsTaken &) = delete;

    bool full() const { return m_full; }

private:
    rlimit m_limit{};
    bool m_lowered = false;
    bool m_full = false;
    std::vector<int> m_taken;
};

} // namespace switchyard::testing
