#pragma once

#include <QList>
#include <QString>
#include <QStringList>

// Line diffs of config texts: the diff each config version keeps against the one before it, the
// "running config differs from the file" difference, and the console's side-by-side view.
namespace switchyard::config {

struct DiffLine {
    enum class Kind { Same, Removed, Added };
    Kind kind = Kind::Same;
    QString text;
    int oldLine = 0; // 1-based in the old text; 0 for an added line
    int newLine = 0; // 1-based in the new text; 0 for a removed line
};

// The lines of `text` without their line ends; a last line without one counts like the others.
QStringList textLines(const QString &text);

// The shortest edit from `before` to `after`, line by line: the common start and end are
// matched first, then the longest common subsequence of what is left. Beyond
// kMaxDiffCells (lines left before times lines left after) the middle is shown as removed
// and added whole rather than spend memory on a huge table: a config is not that large.
inline constexpr qint64 kMaxDiffCells = 4'000'000;
QList<DiffLine> diffLines(const QStringList &before, const QStringList &after);

// The diff in the unified format (`--- before`, `+++ after`, `@@ -l,n +l,n @@` hunks with
// `context` lines around each change), empty when the texts have the same lines.
QString unifiedDiff(const QString &before, const QString &after, const QString &beforeName,
                    const QString &afterName, int context = 3);

// One row of a side-by-side view: the old line on the left, the new on the right. A removed
// line faces the added line it became, or nothing.
struct SideBySideRow {
    DiffLine::Kind leftKind = DiffLine::Kind::Same;
    DiffLine::Kind rightKind = DiffLine::Kind::Same;
    int leftLine = 0; // 0: nothing on this side
    int rightLine = 0;
    QString leftText;
    QString rightText;
};
QList<SideBySideRow> sideBySide(const QList<DiffLine> &diff);

} // namespace switchyard::config
