#include "ui/keys/key_limits_fields.h"

#include "ui/common/widget_helpers.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <algorithm>
#include <atomic>
#include <limits>

namespace switchyard::ui {

namespace {

QSpinBox *perMinuteBox(const QString &objectName, QWidget *parent)
{
    auto *box = new QSpinBox(parent);
    box->setObjectName(objectName);
    // The admin API's range: a whole number from 0 (no limit) to the largest int.
    box->setRange(0, std::numeric_limits<int>::max());
    box->setGroupSeparatorShown(true);
    box->setAccelerated(true);
    return box;
}

} // namespace

KeyLimitsFields::KeyLimitsFields(QFormLayout *form, QWidget *parent)
    : QObject(parent), m_requestsLabel(new QLabel(parent)),
      m_requests(perMinuteBox(QStringLiteral("keyRequestsField"), parent)),
      m_tokensLabel(new QLabel(parent)),
      m_tokens(perMinuteBox(QStringLiteral("keyTokensField"), parent)),
      m_modelsLabel(new QLabel(parent)), m_models(new QLineEdit(parent))
{
    m_models->setObjectName(QStringLiteral("keyModelsField"));
    m_models->setClearButtonEnabled(true);
    m_requestsLabel->setBuddy(m_requests);
    m_tokensLabel->setBuddy(m_tokens);
    m_modelsLabel->setBuddy(m_models);
    form->addRow(m_requestsLabel, m_requests);
    form->addRow(m_tokensLabel, m_tokens);
    form->addRow(m_modelsLabel, m_models);
    retranslate();
}

void KeyLimitsFields::setLimits(int requestsPerMinute, qint64 tokensPerMinute,
                                const QStringList &models)
{
    m_requests->setValue(requestsPerMinute);
    m_tokens->setValue(int(std::min<qint64>(tokensPerMinute, m_tokens->maximum())));
    m_models->setText(models.join(QStringLiteral(", ")));
}

config::ClientKeyLimits KeyLimitsFields::limits() const
{
    config::ClientKeyLimits limits;
    limits.requestsPerMinute = m_requests->value();
    limits.tokensPerMinute = m_tokens->value();
    limits.models = splitList(m_models->text());
    return limits;
}

void KeyLimitsFields::setEnabled(bool enabled)
{
    for (QWidget *field : {static_cast<QWidget *>(m_requests), static_cast<QWidget *>(m_tokens),
                           static_cast<QWidget *>(m_models)})
        field->setEnabled(enabled);
}

void KeyLimitsFields::retranslate()
{
    m_requestsLabel->setText(tr("&Requests per minute:"));
    m_requests->setSpecialValueText(tr("no limit"));
    m_tokensLabel->setText(tr("&Tokens per minute:"));
    m_tokens->setSpecialValueText(tr("no limit"));
    m_tokens->setToolTip(tr("Input plus output tokens, counted when each request finishes"));
    m_modelsLabel->setText(tr("&Models:"));
    m_models->setPlaceholderText(tr("all models; or names and patterns, e.g. gpt-4o*, claude-*"));
}

quint64 nextKeyCommandTicket()
{
    static std::atomic<quint64> last{0};
    return ++last;
}

} // namespace switchyard::ui
