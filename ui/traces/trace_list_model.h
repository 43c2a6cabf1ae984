#pragma once

#include "telemetry/trace_feed.h"
#include "telemetry/trace_json.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QHash>
#include <QList>
#include <QSortFilterProxyModel>

namespace switchyard::ui {

// One request in the Traces page's list: its record, and whether it is still running (then its
// latency is the time so far and its status is not known yet).
struct TraceListRow {
    telemetry::RequestRecord record;
    bool running = false;
};

// The Traces page's live list of requests, newest first, fed by the engine's trace feeds.
//
// A request appears once, on top, when it is first seen (running or already finished); a
// running row is updated in place and then replaced by its finished record, so rows never move
// and a selection stays on its request. While paused (the user scrolled away from the top or
// selected a row) new requests wait aside and are counted, and are inserted on resume. At most
// kMaxRows rows are kept: the oldest leave from the bottom, and droppedCount() says how many.
class TraceListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        TimeColumn,
        StatusColumn,
        ModelColumn,
        RouteColumn,
        TierColumn,
        ProviderColumn,
        AttemptsColumn,
        DegradedColumn,
        LatencyColumn,
        TimeToFirstByteColumn,
        TokensColumn,
        RequestIdColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role {
        RequestIdRole = Qt::UserRole + 1, // QByteArray
        RunningRole,                      // bool
        StatusClassRole,                  // "running", "2xx", "4xx", "5xx", "none"
        StatusColorRole,                  // QColor of the status pill
    };
    Q_ENUM(Role)

    static constexpr int kMaxRows = 5000;

    explicit TraceListModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Merges one feed: finished records replace their running rows (or arrive new), running
    // ones update theirs, and running rows that ended out of sight leave.
    void applyFeed(const telemetry::TraceFeed &feed);

    void setPaused(bool paused);
    bool paused() const { return m_paused; }
    // Requests that arrived while paused and wait to be inserted on top.
    const QList<TraceListRow> &pendingRows() const { return m_pending; }
    int pendingCount() const { return int(m_pending.size()); }
    // Rows let go at the bound, and finished requests the feed itself left out.
    quint64 droppedCount() const { return m_dropped; }

    const TraceListRow &rowAt(int row) const { return m_rows.at(row); }
    // The row showing `requestId`, or -1.
    int rowOf(const QByteArray &requestId) const;
    int runningCount() const { return m_runningCount; }

    void retranslate();

    // "running", or the status code with the error the client saw: "502 upstream_error".
    static QString statusText(const TraceListRow &row);
    static QColor statusColor(const TraceListRow &row);
    // "84 ms", "1.2 s", an em dash for none (negative).
    static QString formatMicros(qint64 micros);

private:
    void insertOnTop(QList<TraceListRow> rows);
    void trimToBound();
    void announceRow(int row);

    QList<TraceListRow> m_rows; // newest first
    QList<TraceListRow> m_pending;
    bool m_paused = false;
    quint64 m_dropped = 0;
    int m_runningCount = 0;
};

// The list as the filters show it. The filter is the admin API's own TraceFilter, so the console
// and GET /admin/v1/traces agree on what "5xx", "slower than" or an id search match. A running
// request has no status yet: a status class or "errors only" hides it until it finishes.
class TraceFilterProxyModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    void setFilter(const telemetry::TraceFilter &filter);
    const telemetry::TraceFilter &filter() const { return m_filter; }
    // How many of the waiting rows the current filter would show.
    int pendingMatching() const;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    bool accepts(const TraceListRow &row) const;
    telemetry::TraceFilter m_filter;
};

} // namespace switchyard::ui
