#include "ui/config/config_models.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QFont>
#include <QFontDatabase>
#include <QLocale>

namespace switchyard::ui {

QString sourceText(ConfigChangeSource source)
{
    switch (source) {
    case ConfigChangeSource::File:
        return ConfigVersionsModel::tr("file");
    case ConfigChangeSource::Console:
        return ConfigVersionsModel::tr("console");
    case ConfigChangeSource::Api:
        return ConfigVersionsModel::tr("admin API");
    case ConfigChangeSource::Rollback:
        return ConfigVersionsModel::tr("rollback");
    }
    return {};
}

void ConfigVersionsModel::setVersions(const QList<ConfigVersionInfo> &versions,
                                      quint64 runningVersion)
{
    beginResetModel();
    m_versions = versions;
    m_running = runningVersion;
    endResetModel();
}

const ConfigVersionInfo *ConfigVersionsModel::versionAt(int row) const
{
    return row >= 0 && row < m_versions.size() ? &m_versions[row] : nullptr;
}

int ConfigVersionsModel::rowOf(quint64 number) const
{
    for (int row = 0; row < m_versions.size(); ++row) {
        if (m_versions[row].number == number)
            return row;
    }
    return -1;
}

void ConfigVersionsModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_versions.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_versions.size()) - 1, ColumnCount - 1));
}

int ConfigVersionsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_versions.size());
}

int ConfigVersionsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ConfigVersionsModel::data(const QModelIndex &index, int role) const
{
    const ConfigVersionInfo *version = versionAt(index.row());
    if (!version || index.column() >= ColumnCount)
        return {};
    const bool running = version->number == m_running;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NumberColumn:
            return running ? tr("%1 (running)").arg(version->number)
                           : QString::number(version->number);
        case TimeColumn:
            return QLocale().toString(
                QDateTime::fromMSecsSinceEpoch(version->createdMsSinceEpoch).toLocalTime(),
                QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        case SourceColumn:
            return sourceText(version->source);
        case AuthorColumn:
            return version->author;
        case NoteColumn:
            return version->note;
        }
        return {};
    case Qt::FontRole:
        if (running) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == NumberColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                              : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant ConfigVersionsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NumberColumn:
        return tr("Version");
    case TimeColumn:
        return tr("Time");
    case SourceColumn:
        return tr("Source");
    case AuthorColumn:
        return tr("Author");
    case NoteColumn:
        return tr("Note");
    }
    return {};
}

// ---- the diff ---------------------------------------------------------------------------------

void ConfigDiffModel::setTexts(const QString &before, const QString &after)
{
    beginResetModel();
    m_rows =
        config::sideBySide(config::diffLines(config::textLines(before), config::textLines(after)));
    m_changed = 0;
    for (const config::SideBySideRow &row : m_rows) {
        if (row.leftKind != config::DiffLine::Kind::Same ||
            row.rightKind != config::DiffLine::Kind::Same)
            ++m_changed;
    }
    endResetModel();
}

void ConfigDiffModel::setText(const QString &text)
{
    beginResetModel();
    m_rows.clear();
    const QStringList lines = config::textLines(text);
    m_rows.reserve(lines.size());
    for (qsizetype index = 0; index < lines.size(); ++index) {
        config::SideBySideRow row;
        row.rightLine = int(index + 1);
        row.rightText = lines[index];
        m_rows.append(row);
    }
    m_changed = 0;
    endResetModel();
}

void ConfigDiffModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_changed = 0;
    endResetModel();
}

int ConfigDiffModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ConfigDiffModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ConfigDiffModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size() || index.column() >= ColumnCount)
        return {};
    const config::SideBySideRow &row = m_rows[index.row()];
    const bool left = index.column() == LeftLineColumn || index.column() == LeftTextColumn;
    const config::DiffLine::Kind kind = left ? row.leftKind : row.rightKind;
    const int line = left ? row.leftLine : row.rightLine;
    const bool isNumber = index.column() == LeftLineColumn || index.column() == RightLineColumn;
    switch (role) {
    case Qt::DisplayRole:
        if (isNumber)
            return line > 0 ? QVariant(line) : QVariant();
        return left ? row.leftText : row.rightText;
    case KindRole:
        return line > 0 ? int(kind) : -1;
    case Qt::BackgroundRole:
        if (line == 0 && (left ? row.rightLine > 0 : row.leftLine > 0))
            return QBrush(QColor(0xf3, 0xf4, 0xf6)); // nothing faces the other side's line
        if (kind == config::DiffLine::Kind::Removed)
            return QBrush(isNumber ? QColor(0xfb, 0xd5, 0xd5) : QColor(0xfd, 0xec, 0xec));
        if (kind == config::DiffLine::Kind::Added)
            return QBrush(isNumber ? QColor(0xc8, 0xee, 0xd2) : QColor(0xe6, 0xf6, 0xea));
        return {};
    case Qt::ForegroundRole:
        if (isNumber)
            return QBrush(QColor(0x6b, 0x72, 0x80));
        return {};
    case Qt::FontRole:
        return QFontDatabase::systemFont(QFontDatabase::FixedFont);
    case Qt::TextAlignmentRole:
        return isNumber ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                        : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    default:
        return {};
    }
}

} // namespace switchyard::ui
