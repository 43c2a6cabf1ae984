#pragma once

#include <QString>

namespace switchyard::app {

// Every client connection and every upstream call holds a file descriptor, and Linux starts a
// process with a soft limit of 1024 of them. The soft limit may be raised to the hard limit
// without privileges; this does it once at start.
struct OpenFilesLimit {
    qint64 before = 0; // the soft limit the process started with
    qint64 now = 0;    // the soft limit after raising it
    qint64 hard = 0;   // -1: unlimited
    QString error;     // why it could not be read or raised; empty when it was
};
OpenFilesLimit raiseOpenFilesLimit();

} // namespace switchyard::app
