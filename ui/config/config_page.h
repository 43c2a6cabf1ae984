#pragma once

#include "control/config_versions.h"

#include <QHash>
#include <QWidget>
#include <functional>

QT_BEGIN_NAMESPACE
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableView;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class ConfigDiffModel;
class ConfigVersionsModel;

// The console's Config page: whether the file on disk holds the running config (and when not,
// why: the overlay, or a reload that was refused with its FILE:LINE:COL errors), the list of
// config versions, the side-by-side diff of one version against the one before it or of any two
// selected, and a rollback with a confirmation. Everything comes through the bridge, ticketed
// like a trace's load: a late answer for an older question is dropped.
class ConfigPage : public QWidget {
    Q_OBJECT
public:
    explicit ConfigPage(EngineBridge &bridge, QWidget *parent = nullptr);
    ~ConfigPage() override;

    // Asked before a rollback is sent; the default shows a dialog. Tests answer it themselves.
    void setRollbackConfirmation(std::function<bool(quint64 number)> confirm);

    ConfigVersionsModel *versionsModel() const { return m_versions; }
    ConfigDiffModel *diffModel() const { return m_diff; }
    QTableView *versionList() const { return m_list; }
    QPushButton *rollbackButton() const { return m_rollback; }
    QLabel *statusLabel() const { return m_status; }
    QLabel *diffTitle() const { return m_diffTitle; }
    QTableView *diffView() const { return m_diffView; }
    QPlainTextEdit *detailsView() const { return m_details; }
    // Selects the rows of these versions, as clicks would.
    void selectVersions(const QList<quint64> &numbers);

protected:
    void changeEvent(QEvent *event) override;

private:
    QWidget *buildStatusCard();
    QWidget *buildVersionsCard();
    QWidget *buildDiffCard();
    void retranslateUi();
    void showStatus(const ConfigStatus &status);
    void requestVersions();
    void versionsLoaded(quint64 ticket, const QList<ConfigVersionInfo> &versions);
    void versionLoaded(quint64 ticket, bool found, const ConfigVersion &version);
    void rolledBack(quint64 ticket, const ConfigChangeResult &result);
    QList<quint64> selectedNumbers() const;
    void selectionChanged();
    void showDiffWhenLoaded();
    void showBothSides(bool both);
    void askRollback();

    EngineBridge &m_bridge;
    ConfigVersionsModel *m_versions = nullptr;
    ConfigDiffModel *m_diff = nullptr;
    QLabel *m_statusTitle = nullptr;
    QLabel *m_status = nullptr;
    QPlainTextEdit *m_details = nullptr;
    QLabel *m_versionsTitle = nullptr;
    QLabel *m_versionsHint = nullptr;
    QTableView *m_list = nullptr;
    QPushButton *m_rollback = nullptr;
    QLabel *m_rollbackResult = nullptr;
    QLabel *m_diffTitle = nullptr;
    QLabel *m_diffHint = nullptr;
    QTableView *m_diffView = nullptr;

    ConfigStatus m_lastStatus;
    quint64 m_shownRunning = 0;
    quint64 m_nextTicket = 1;
    quint64 m_versionsTicket = 0;
    quint64 m_rollbackTicket = 0;
    QHash<quint64, quint64> m_textTickets; // ticket -> version number
    QHash<quint64, QString> m_texts;       // version number -> its text (texts never change)
    quint64 m_diffFrom = 0;                // 0: nothing before (the first version)
    quint64 m_diffTo = 0;
    std::function<bool(quint64)> m_confirm;
};

} // namespace switchyard::ui
