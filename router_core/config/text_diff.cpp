#include "config/text_diff.h"

#include <algorithm>
#include <vector>

namespace switchyard::config {

using namespace Qt::StringLiterals;

QStringList textLines(const QString &text)
{
    if (text.isEmpty())
        return {};
    QStringList lines = text.split(u'\n');
    if (text.endsWith(u'\n'))
        lines.removeLast();
    for (QString &line : lines) {
        if (line.endsWith(u'\r'))
            line.chop(1);
    }
    return lines;
}

QList<DiffLine> diffLines(const QStringList &before, const QStringList &after)
{
    qsizetype prefix = 0;
    while (prefix < before.size() && prefix < after.size() && before[prefix] == after[prefix])
        ++prefix;
    qsizetype suffix = 0;
    while (suffix < before.size() - prefix && suffix < after.size() - prefix &&
           before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix])
        ++suffix;
    const qsizetype oldCount = before.size() - prefix - suffix;
    const qsizetype newCount = after.size() - prefix - suffix;

    QList<DiffLine> diff;
    const auto same = [&](qsizetype oldIndex, qsizetype newIndex) {
        diff.append({DiffLine::Kind::Same, before[oldIndex], int(oldIndex + 1), int(newIndex + 1)});
    };
    const auto removed = [&](qsizetype oldIndex) {
        diff.append({DiffLine::Kind::Removed, before[oldIndex], int(oldIndex + 1), 0});
    };
    const auto added = [&](qsizetype newIndex) {
        diff.append({DiffLine::Kind::Added, after[newIndex], 0, int(newIndex + 1)});
    };
    for (qsizetype i = 0; i < prefix; ++i)
        same(i, i);

    if (oldCount > 0 && newCount > 0 && oldCount * newCount <= kMaxDiffCells) {
        // lengths[i][j]: the longest common subsequence of the middles from i and j on.
        const qsizetype width = newCount + 1;
        std::vector<int> lengths(size_t((oldCount + 1) * width), 0);
        for (qsizetype i = oldCount - 1; i >= 0; --i) {
            for (qsizetype j = newCount - 1; j >= 0; --j) {
                lengths[size_t(i * width + j)] =
                    before[prefix + i] == after[prefix + j]
                        ? lengths[size_t((i + 1) * width + j + 1)] + 1
                        : std::max(lengths[size_t((i + 1) * width + j)],
                                   lengths[size_t(i * width + j + 1)]);
            }
        }
        qsizetype i = 0;
        qsizetype j = 0;
        while (i < oldCount && j < newCount) {
            if (before[prefix + i] == after[prefix + j]) {
                same(prefix + i, prefix + j);
                ++i;
                ++j;
            } else if (lengths[size_t((i + 1) * width + j)] >= lengths[size_t(i * width + j + 1)]) {
                removed(prefix + i++);
            } else {
                added(prefix + j++);
            }
        }
        while (i < oldCount)
            removed(prefix + i++);
        while (j < newCount)
            added(prefix + j++);
    } else {
        for (qsizetype i = 0; i < oldCount; ++i)
            removed(prefix + i);
        for (qsizetype j = 0; j < newCount; ++j)
            added(prefix + j);
    }
    for (qsizetype k = 0; k < suffix; ++k)
        same(before.size() - suffix + k, after.size() - suffix + k);
    return diff;
}

namespace {

// "l,n" of a hunk header; a hunk with no lines on one side names the line before it.
QString hunkRange(int first, int count)
{
    if (count == 1)
        return QString::number(first);
    return u"%1,%2"_s.arg(count == 0 ? first - 1 : first).arg(count);
}

} // namespace

QString unifiedDiff(const QString &before, const QString &after, const QString &beforeName,
                    const QString &afterName, int context)
{
    const QList<DiffLine> diff = diffLines(textLines(before), textLines(after));
    const bool anyChange = std::any_of(diff.cbegin(), diff.cend(), [](const DiffLine &line) {
        return line.kind != DiffLine::Kind::Same;
    });
    if (!anyChange)
        return {};
    QString out = u"--- %1\n+++ %2\n"_s.arg(beforeName, afterName);
    qsizetype index = 0;
    const qsizetype size = diff.size();
    while (index < size) {
        // The next change, and the hunk around it: changes closer than twice the context join.
        qsizetype change = index;
        while (change < size && diff[change].kind == DiffLine::Kind::Same)
            ++change;
        if (change == size)
            break;
        const qsizetype start = std::max(index, change - context);
        qsizetype end = change;
        qsizetype sameRun = 0;
        for (qsizetype k = change; k < size; ++k) {
            if (diff[k].kind == DiffLine::Kind::Same) {
                if (++sameRun > 2 * context)
                    break;
            } else {
                sameRun = 0;
                end = k;
            }
        }
        const qsizetype stop = std::min(size, end + 1 + context);
        int oldFirst = 0, newFirst = 0, oldCount = 0, newCount = 0;
        int oldBefore = 0, newBefore = 0; // the last line numbers before the hunk
        for (qsizetype k = 0; k < start; ++k) {
            if (diff[k].oldLine)
                oldBefore = diff[k].oldLine;
            if (diff[k].newLine)
                newBefore = diff[k].newLine;
        }
        QString body;
        for (qsizetype k = start; k < stop; ++k) {
            const DiffLine &line = diff[k];
            switch (line.kind) {
            case DiffLine::Kind::Same:
                body += u' ' + line.text + u'\n';
                ++oldCount;
                ++newCount;
                break;
            case DiffLine::Kind::Removed:
                body += u'-' + line.text + u'\n';
                ++oldCount;
                break;
            case DiffLine::Kind::Added:
                body += u'+' + line.text + u'\n';
                ++newCount;
                break;
            }
        }
        oldFirst = oldBefore + 1;
        newFirst = newBefore + 1;
        out +=
            u"@@ -%1 +%2 @@\n"_s.arg(hunkRange(oldFirst, oldCount), hunkRange(newFirst, newCount));
        out += body;
        index = stop;
    }
    return out;
}

QList<SideBySideRow> sideBySide(const QList<DiffLine> &diff)
{
    QList<SideBySideRow> rows;
    qsizetype index = 0;
    while (index < diff.size()) {
        const DiffLine &line = diff[index];
        if (line.kind == DiffLine::Kind::Same) {
            rows.append({DiffLine::Kind::Same, DiffLine::Kind::Same, line.oldLine, line.newLine,
                         line.text, line.text});
            ++index;
            continue;
        }
        // A run of changes: its removed lines face its added lines, row by row.
        QList<DiffLine> removed;
        QList<DiffLine> added;
        while (index < diff.size() && diff[index].kind != DiffLine::Kind::Same) {
            (diff[index].kind == DiffLine::Kind::Removed ? removed : added).append(diff[index]);
            ++index;
        }
        for (qsizetype k = 0; k < std::max(removed.size(), added.size()); ++k) {
            SideBySideRow row;
            if (k < removed.size()) {
                row.leftKind = DiffLine::Kind::Removed;
                row.leftLine = removed[k].oldLine;
                row.leftText = removed[k].text;
            }
            if (k < added.size()) {
                row.rightKind = DiffLine::Kind::Added;
                row.rightLine = added[k].newLine;
                row.rightText = added[k].text;
            }
            rows.append(row);
        }
    }
    return rows;
}

} // namespace switchyard::config
