#include "ui/alerts/alert_banner.h"

#include "ui/alerts/alerts_model.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <algorithm>

namespace switchyard::ui {

namespace {

// The alert the banner names: the most severe, and of those the newest raise.
const alerts::ActiveAlert *headline(const QList<alerts::ActiveAlert> &active)
{
    const alerts::ActiveAlert *best = nullptr;
    for (const alerts::ActiveAlert &alert : active) {
        if (!best || alert.severity > best->severity ||
            (alert.severity == best->severity && alert.raisedSequence > best->raisedSequence))
            best = &alert;
    }
    return best;
}

} // namespace

AlertBanner::AlertBanner(QWidget *parent) : QFrame(parent)
{
    setObjectName(QStringLiteral("alertBanner"));
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(16, 8, 12, 8);
    layout->setSpacing(10);
    m_severity = new QLabel(this);
    m_severity->setObjectName(QStringLiteral("alertBannerSeverity"));
    m_headline = new QLabel(this);
    m_headline->setObjectName(QStringLiteral("alertBannerHeadline"));
    m_detail = new QLabel(this);
    m_detail->setObjectName(QStringLiteral("alertBannerDetail"));
    m_view = new QPushButton(this);
    m_view->setObjectName(QStringLiteral("alertBannerView"));
    m_view->setCursor(Qt::PointingHandCursor);
    m_dismiss = new QPushButton(this);
    m_dismiss->setObjectName(QStringLiteral("alertBannerDismiss"));
    m_dismiss->setCursor(Qt::PointingHandCursor);
    layout->addWidget(m_severity);
    layout->addWidget(m_headline);
    layout->addWidget(m_detail, 1);
    layout->addWidget(m_view);
    layout->addWidget(m_dismiss);
    connect(m_view, &QPushButton::clicked, this, &AlertBanner::viewRequested);
    connect(m_dismiss, &QPushButton::clicked, this, &AlertBanner::dismiss);
    retranslateUi();
    refresh();
}

void AlertBanner::applyAlerts(const QList<alerts::ActiveAlert> &active)
{
    m_active = active;
    refresh();
}

void AlertBanner::dismiss()
{
    for (const alerts::ActiveAlert &alert : m_active)
        m_dismissedUpTo = std::max(m_dismissedUpTo, alert.raisedSequence);
    refresh();
}

QString AlertBanner::headlineText() const
{
    return m_headline->text();
}

QString AlertBanner::detailText() const
{
    return m_detail->text();
}

void AlertBanner::refresh()
{
    const bool anyNew =
        std::any_of(m_active.cbegin(), m_active.cend(), [this](const alerts::ActiveAlert &alert) {
            return alert.raisedSequence > m_dismissedUpTo;
        });
    m_showing = anyNew;
    setVisible(anyNew);
    if (!anyNew)
        return;
    const alerts::ActiveAlert &alert = *headline(m_active);
    const QString severity = alert.severity == config::AlertSeverity::Critical
                                 ? QStringLiteral("critical")
                                 : QStringLiteral("warning");
    if (property("severity").toString() != severity) {
        // The style sheet colours the strip and its labels by this property: re-polish once
        // per change, never on every refresh.
        for (QWidget *widget :
             {static_cast<QWidget *>(this), static_cast<QWidget *>(m_severity),
              static_cast<QWidget *>(m_headline), static_cast<QWidget *>(m_detail)}) {
            widget->setProperty("severity", severity);
            widget->style()->unpolish(widget);
            widget->style()->polish(widget);
        }
    }
    m_severity->setText(AlertText::severityName(alert.severity).toUpper());
    //: The banner's headline: an alert's rule and subject, e.g. "Tier success rate · tier light"
    m_headline->setText(tr("%1 · %2").arg(AlertText::ruleTitle(alert.rule),
                                          AlertText::subject(alert.subjectKind, alert.subject)));
    //: %1 the value now, %2 the threshold, %3 the time the condition started to hold
    QString detail =
        tr("%1 against %2, since %3")
            .arg(AlertText::value(alert.value, alert.unit),
                 AlertText::value(alert.threshold, alert.unit), AlertText::time(alert.sinceMs));
    if (m_active.size() > 1)
        detail += QStringLiteral("  ·  ") +
                  tr("%n more alert(s) raised", nullptr, int(m_active.size() - 1));
    m_detail->setText(detail);
    m_detail->setToolTip(alert.message);
}

void AlertBanner::retranslateUi()
{
    m_view->setText(tr("View alerts"));
    m_dismiss->setText(tr("Dismiss"));
    m_dismiss->setToolTip(tr("Hide this banner until another alert is raised"));
    refresh();
}

void AlertBanner::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QFrame::changeEvent(event);
}

} // namespace switchyard::ui
