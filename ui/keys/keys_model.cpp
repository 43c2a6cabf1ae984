#include "ui/keys/keys_model.h"

#include <QLocale>

namespace switchyard::ui {

KeysModel::KeysModel(QObject *parent) : MergingTableModel(parent) {}

int KeysModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KeysModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const ClientKeyListing &key = m_rows.at(index.row());
    if (role == Qt::TextAlignmentRole &&
        (index.column() == RequestsColumn || index.column() == TokensColumn))
        return QVariant(Qt::AlignHCenter | Qt::AlignVCenter); // beside left-aligned text
    if (role == Qt::ToolTipRole && index.column() == SourceColumn) {
        return key.definedInFile ? tr("Revoke it by removing it from auth.keys in the config file")
                                 : tr("Revoke it with DELETE /admin/v1/keys/%1").arg(key.id);
    }
    if (role != Qt::DisplayRole)
        return {};
    const QLocale locale;
    switch (index.column()) {
    case KeyColumn:
        return key.id;
    case TenantColumn:
        return key.tenant;
    case SourceColumn:
        return key.definedInFile ? tr("config file") : tr("admin API");
    case RequestsColumn:
        return key.requestsPerMinute > 0 ? locale.toString(key.requestsPerMinute) : tr("no limit");
    case TokensColumn:
        return key.tokensPerMinute > 0 ? locale.toString(key.tokensPerMinute) : tr("no limit");
    case ModelsColumn:
        return key.models.isEmpty() ? tr("all models") : key.models.join(QStringLiteral(", "));
    case CreatedColumn:
        return key.createdAtUtc.isValid()
                   ? locale.toString(key.createdAtUtc.toLocalTime(), QLocale::ShortFormat)
                   : QStringLiteral("\u2014");
    default:
        return {};
    }
}

QVariant KeysModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::TextAlignmentRole &&
        (section == RequestsColumn || section == TokensColumn))
        return QVariant(Qt::AlignHCenter | Qt::AlignVCenter); // over their centred numbers
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KeyColumn:
        return tr("Key");
    case TenantColumn:
        return tr("Tenant");
    case SourceColumn:
        return tr("Defined in");
    case RequestsColumn:
        return tr("Requests/min");
    case TokensColumn:
        return tr("Tokens/min");
    case ModelsColumn:
        return tr("Models");
    case CreatedColumn:
        return tr("Created");
    default:
        return {};
    }
}

void KeysModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

std::pair<int, int> KeysModel::changedColumns(const ClientKeyListing &before,
                                              const ClientKeyListing &after) const
{
    if (before == after)
        return {-1, -1};
    // Few keys, rarely changed: the whole row is simpler than column by column.
    return {0, ColumnCount - 1};
}

} // namespace switchyard::ui
