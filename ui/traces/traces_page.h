#pragma once

#include "telemetry/trace_feed.h"
#include "ui/traces/live_text.h"

#include <QWidget>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTimer;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class TraceFilterProxyModel;
class TraceListModel;
class TraceWaterfallView;

// The console's trace inspector. Above, the live list of requests from the engine's trace feeds
// (at most 10 a second), newest first, with the admin API's filters; it holds still while the
// user scrolls away from the top or has a request selected, and a "N new" button brings the
// waiting ones in. Below, the selected request: its waterfall, the routing decision's steps,
// its text as it streams (only the selected request is watched, so the engine keeps the text of
// no other), the request and response as sent when bodies are kept, and "copy as curl".
class TracesPage : public QWidget {
    Q_OBJECT
public:
    explicit TracesPage(EngineBridge &bridge, QWidget *parent = nullptr);
    ~TracesPage() override;

    TraceListModel *listModel() const { return m_model; }
    TraceFilterProxyModel *filterModel() const { return m_proxy; }
    QTableView *listView() const { return m_list; }
    TraceWaterfallView *waterfall() const { return m_waterfall; }
    QPushButton *newRequestsButton() const { return m_newButton; }
    QPushButton *copyCurlButton() const { return m_copyCurl; }
    QPlainTextEdit *liveTextView() const { return m_liveView; }
    QTabWidget *bodyTabs() const { return m_bodyTabs; }
    const QByteArray &selectedRequestId() const { return m_selectedId; }
    const LiveText &liveText() const { return m_live; }
    // What "copy as curl" copies for the selected request; empty when none is shown.
    QString curlCommand() const;

    // Selects the row showing `requestId`, as a click would; false when no row shows it.
    bool selectRequest(const QByteArray &requestId);
    // Applies the filter fields now rather than after the search box's pause.
    void applyFilters();

public Q_SLOTS:
    void applyFeed(const switchyard::telemetry::TraceFeed &feed);
    // Back to the top and to live updates: the "N new" button.
    void resumeLive();

protected:
    void changeEvent(QEvent *event) override;

private:
    QWidget *buildFilterBar();
    QWidget *buildListCard();
    QWidget *buildDetailCard();
    void retranslateUi();
    void refreshPause();
    void refreshListHint();
    void learnFilterChoices(const telemetry::TraceFeed &feed);
    void selectionChanged();
    void traceLoaded(quint64 ticket, bool found, const telemetry::Trace &trace);
    void showDetail();
    void showLiveText();
    void showBodies();

    EngineBridge &m_bridge;

    TraceListModel *m_model = nullptr;
    TraceFilterProxyModel *m_proxy = nullptr;

    QLabel *m_filterCaption = nullptr;
    QComboBox *m_statusFilter = nullptr;
    QComboBox *m_providerFilter = nullptr;
    QComboBox *m_routeFilter = nullptr;
    QComboBox *m_tenantFilter = nullptr;
    QCheckBox *m_errorsOnly = nullptr;
    QLabel *m_slowerLabel = nullptr;
    QSpinBox *m_slowerThan = nullptr;
    QLineEdit *m_idSearch = nullptr;
    QTimer *m_searchPause = nullptr;

    QLabel *m_listTitle = nullptr;
    QLabel *m_listHint = nullptr;
    QPushButton *m_newButton = nullptr;
    QTableView *m_list = nullptr;

    QStackedWidget *m_detailStack = nullptr;
    QLabel *m_placeholder = nullptr;
    QLabel *m_detailTitle = nullptr;
    QLabel *m_detailFacts = nullptr;
    QPushButton *m_copyCurl = nullptr;
    QLabel *m_copyHint = nullptr;
    QLabel *m_waterfallTitle = nullptr;
    TraceWaterfallView *m_waterfall = nullptr;
    QLabel *m_decisionTitle = nullptr;
    QListWidget *m_explain = nullptr;
    QTabWidget *m_bodyTabs = nullptr;
    QPlainTextEdit *m_liveView = nullptr;
    QLabel *m_liveEnd = nullptr;
    QPlainTextEdit *m_requestView = nullptr;
    QPlainTextEdit *m_responseView = nullptr;

    QByteArray m_selectedId;
    quint64 m_ticket = 0;
    bool m_hasDetail = false;
    bool m_detailRunning = false;
    bool m_detailGone = false;       // the engine no longer holds the selected trace
    bool m_watchedSinceStart = true; // live text from the first chunk, or joined mid-stream
    bool m_liveFromStream = false;   // m_live came from the watched stream, not a kept body
    telemetry::Trace m_detail;
    LiveText m_live;
};

} // namespace switchyard::ui
