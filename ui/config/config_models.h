#pragma once

#include "config/text_diff.h"
#include "control/config_versions.h"

#include <QAbstractTableModel>
#include <QList>

namespace switchyard::ui {

// The config's versions, newest first: number, time, source, author, note. The list is
// replaced whole each time it is loaded (a new version, a rollback), so it resets then.
class ConfigVersionsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NumberColumn, TimeColumn, SourceColumn, AuthorColumn, NoteColumn, ColumnCount };

    using QAbstractTableModel::QAbstractTableModel;

    void setVersions(const QList<ConfigVersionInfo> &versions, quint64 runningVersion);
    const QList<ConfigVersionInfo> &versions() const { return m_versions; }
    // The version in `row`; nullptr outside the list.
    const ConfigVersionInfo *versionAt(int row) const;
    int rowOf(quint64 number) const;
    void retranslate();

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<ConfigVersionInfo> m_versions;
    quint64 m_running = 0;
};

// Two config texts side by side: the older on the left, the newer on the right, a removed line
// facing the line it became. Removed lines are red, added ones green.
class ConfigDiffModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { LeftLineColumn, LeftTextColumn, RightLineColumn, RightTextColumn, ColumnCount };
    // What each side of a row is, for tests and delegates.
    static constexpr int KindRole = Qt::UserRole + 1;

    using QAbstractTableModel::QAbstractTableModel;

    void setTexts(const QString &before, const QString &after);
    // One text with nothing before it, on the right: every line the same, none changed.
    void setText(const QString &text);
    void clear();
    int changedRows() const { return m_changed; }
    const QList<config::SideBySideRow> &rows() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;

private:
    QList<config::SideBySideRow> m_rows;
    int m_changed = 0;
};

// "file", "console"... in the console's words.
QString sourceText(ConfigChangeSource source);

} // namespace switchyard::ui
