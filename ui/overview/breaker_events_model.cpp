#include "ui/overview/breaker_events_model.h"

#include <QColor>
#include <QDateTime>
#include <QLocale>

namespace switchyard::ui {

BreakerEventsModel::BreakerEventsModel(QObject *parent) : EventLogModel(parent) {}

int BreakerEventsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString BreakerEventsModel::breakerStateName(BreakerState state)
{
    switch (state) {
    case BreakerState::Closed:
        return tr("Closed");
    case BreakerState::Open:
        return tr("Open");
    case BreakerState::HalfOpen:
        return tr("Half-open");
    }
    return {};
}

QColor BreakerEventsModel::breakerStateColor(BreakerState state)
{
    switch (state) {
    case BreakerState::Closed:
        return QColor(0x15, 0x80, 0x3d);
    case BreakerState::Open:
        return QColor(0xb9, 0x1c, 0x1c);
    case BreakerState::HalfOpen:
        return QColor(0xb4, 0x53, 0x09);
    }
    return {};
}

QVariant BreakerEventsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const BreakerEvent &event = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn:
            return QLocale().toString(QDateTime::fromMSecsSinceEpoch(event.atMsSinceEpoch).time(),
                                      QStringLiteral("HH:mm:ss"));
        case ProviderColumn:
            return event.providerId;
        case ChangeColumn:
            // An operator's enable or disable leaves the breaker where it was; the reason
            // says what happened.
            if (event.from == event.to)
                return breakerStateName(event.to);
            //: A breaker transition, e.g. "Closed → Open"
            return tr("%1 → %2").arg(breakerStateName(event.from), breakerStateName(event.to));
        case ReasonColumn:
            return event.reason;
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == ChangeColumn)
            return event.from == event.to ? QColor(0x4b, 0x55, 0x63) : breakerStateColor(event.to);
        if (index.column() == TimeColumn)
            return QColor(0x6b, 0x72, 0x80);
        break;
    case Qt::ToolTipRole:
        return tr("%1 at %2: %3")
            .arg(event.providerId,
                 QLocale().toString(QDateTime::fromMSecsSinceEpoch(event.atMsSinceEpoch),
                                    QLocale::LongFormat),
                 event.reason);
    }
    return {};
}

QVariant BreakerEventsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case ProviderColumn:
        return tr("Provider");
    case ChangeColumn:
        return tr("Change");
    case ReasonColumn:
        return tr("Reason");
    }
    return {};
}

} // namespace switchyard::ui
