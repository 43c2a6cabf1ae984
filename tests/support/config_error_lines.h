#pragma once

#include "config/config_loader.h"

#include <QStringList>

// Every error of a config load as "FILE:LINE:COL: message", the form the config tests compare
// against, so each test states exactly what a person would read.
inline QStringList errorLines(const switchyard::config::LoadResult &result)
{
    QStringList lines;
    for (const switchyard::config::ConfigError &error : result.errors)
        lines.append(error.toString());
    return lines;
}
