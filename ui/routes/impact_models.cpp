#include "ui/routes/impact_models.h"

#include <QFont>
#include <QLocale>

namespace switchyard::ui {

QString destinationText(const routing::RouteDestination &destination)
{
    switch (destination.refusal) {
    case routing::RouteDecision::Refusal::UnknownModel:
        return ImpactCellsModel::tr("refused: unknown model");
    case routing::RouteDecision::Refusal::NoCandidate:
        return ImpactCellsModel::tr("refused: no endpoint can take it");
    case routing::RouteDecision::Refusal::None:
        break;
    }
    const QString rule =
        destination.rule.isEmpty() ? ImpactCellsModel::tr("no rule") : destination.rule;
    QStringList parts{rule};
    if (!destination.tier.isEmpty())
        parts.append(destination.tier);
    parts.append(destination.provider);
    return parts.join(QStringLiteral(" · "));
}

namespace {

QString decisionText(const routing::RouteDecision &decision)
{
    return destinationText(routing::RouteDestination::of(decision));
}

} // namespace

void ImpactCellsModel::setPreview(const routing::ImpactPreview &preview)
{
    beginResetModel();
    m_cells = preview.cells;
    m_sampled = preview.sampled;
    endResetModel();
}

const routing::ImpactCell *ImpactCellsModel::cellAt(int row) const
{
    return row >= 0 && row < m_cells.size() ? &m_cells[row] : nullptr;
}

void ImpactCellsModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_cells.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_cells.size()) - 1, ColumnCount - 1));
}

int ImpactCellsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_cells.size());
}

int ImpactCellsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ImpactCellsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const routing::ImpactCell &cell = m_cells[index.row()];
    if (role == Qt::DisplayRole) {
        switch (Column(index.column())) {
        case From:
            return destinationText(cell.from);
        case To:
            return cell.moves() ? destinationText(cell.to) : tr("unchanged");
        case Requests:
            return QLocale().toString(cell.count);
        case Share:
            return m_sampled > 0 ? QLocale().toString(100.0 * cell.count / m_sampled, 'f', 1) +
                                       QLocale().percent()
                                 : QString();
        case ColumnCount:
            break;
        }
    } else if (role == Qt::FontRole && cell.moves()) {
        QFont bold;
        bold.setBold(true);
        return bold;
    } else if (role == Qt::TextAlignmentRole &&
               (index.column() == Requests || index.column() == Share)) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant ImpactCellsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case From:
        return tr("Live rules");
    case To:
        return tr("With your edits");
    case Requests:
        return tr("Requests");
    case Share:
        return tr("Share");
    case ColumnCount:
        break;
    }
    return {};
}

void ImpactExamplesModel::setExamples(const QList<routing::ImpactExample> &examples)
{
    beginResetModel();
    m_examples = examples;
    endResetModel();
}

void ImpactExamplesModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_examples.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_examples.size()) - 1, ColumnCount - 1));
}

int ImpactExamplesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_examples.size());
}

int ImpactExamplesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ImpactExamplesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const routing::ImpactExample &example = m_examples[index.row()];
    if (role == Qt::DisplayRole) {
        switch (Column(index.column())) {
        case Request:
            return QString::fromLatin1(example.requestId);
        case User:
            return example.user;
        case Live:
            return decisionText(example.live);
        case Edited:
            return decisionText(example.edited);
        case ColumnCount:
            break;
        }
    } else if (role == Qt::ToolTipRole) {
        // The whole reasoning of each side, as the dry run shows it.
        if (index.column() == Live)
            return example.live.explanation().join(u'\n');
        if (index.column() == Edited)
            return example.edited.explanation().join(u'\n');
    }
    return {};
}

QVariant ImpactExamplesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case Request:
        return tr("Request");
    case User:
        return tr("User");
    case Live:
        return tr("Live rules");
    case Edited:
        return tr("With your edits");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace switchyard::ui
