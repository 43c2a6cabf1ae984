#pragma once

#include <QDir>
#include <QString>

namespace switchyard::testing {

// SWITCHYARD_UPDATE_SCREENSHOTS=1 with SWITCHYARD_SOURCE_DIR naming the source tree makes the
// console tests write their pictures into docs/screenshots (how the docs' pictures are made);
// otherwise they go to the test's own scratch directory, rendered and saved all the same.
inline bool updatingScreenshots()
{
    return qEnvironmentVariable("SWITCHYARD_UPDATE_SCREENSHOTS") == QLatin1String("1");
}

// Where the screenshot `fileName` goes, its directory made: see updatingScreenshots().
inline QString screenshotPath(const QString &scratchDirectory, const QString &fileName)
{
    const QString directory =
        updatingScreenshots()
            ? qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") + QLatin1String("/docs/screenshots")
            : scratchDirectory;
    QDir().mkpath(directory);
    return directory + QLatin1Char('/') + fileName;
}

} // namespace switchyard::testing
