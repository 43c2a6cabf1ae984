#pragma once

#include "config/auth_config.h"

#include <QObject>
#include <QStringList>

class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QWidget;

namespace switchyard::ui {

// A key's three limits as rows of a form, shared by the Issue and the Edit limits dialogs:
// requests and tokens per minute (0 shows as "no limit") and the models it may use, typed as a
// comma-separated list of names or patterns (empty: every model). The engine checks the values
// when the command reaches it, as the admin API does; the fields only keep them in range.
class KeyLimitsFields final : public QObject {
    Q_OBJECT
public:
    // Adds its rows to `form`, its widgets as children of `parent`.
    KeyLimitsFields(QFormLayout *form, QWidget *parent);

    void setLimits(int requestsPerMinute, qint64 tokensPerMinute, const QStringList &models);
    config::ClientKeyLimits limits() const;
    void setEnabled(bool enabled);
    void retranslate();

private:
    QLabel *m_requestsLabel;
    QSpinBox *m_requests;
    QLabel *m_tokensLabel;
    QSpinBox *m_tokens;
    QLabel *m_modelsLabel;
    QLineEdit *m_models;
};

// A ticket for a key command of the bridge, unique in the process: each dialog and the page
// recognise their own answer among those clientKeyCommandDone carries.
quint64 nextKeyCommandTicket();

} // namespace switchyard::ui
