#pragma once

#include "control/engine_snapshot.h"
#include "ui/common/merging_table_model.h"

namespace switchyard::ui {

// One row per client API key, from the engine's snapshots, merged by id. Read-only: a key issued,
// edited or revoked (by the page's commands, the admin API or the config file) reaches it in the
// next snapshot (docs/operations.md).
class KeysModel final : public MergingTableModel<ClientKeyListing> {
    Q_OBJECT
public:
    enum Column {
        KeyColumn,
        TenantColumn,
        SourceColumn,
        RequestsColumn,
        TokensColumn,
        ModelsColumn,
        CreatedColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    explicit KeysModel(QObject *parent = nullptr);

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    void applyKeys(const QList<ClientKeyListing> &keys) { mergeRows(keys); }
    void retranslate();

protected:
    QString idOf(const ClientKeyListing &row) const override { return row.id; }
    std::pair<int, int> changedColumns(const ClientKeyListing &before,
                                       const ClientKeyListing &after) const override;
};

} // namespace switchyard::ui
