#pragma once

#include "config/config.h"

#include <QList>
#include <QWidget>
#include <memory>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QVBoxLayout;
QT_END_NAMESPACE

namespace switchyard::ui {

// What a target combo box offers for a kind of target: provider ids for a provider or a pool,
// `auto` and the tier names for a tier. Keeps the text already typed.
void fillTargetChoices(QComboBox *values, config::RouteTarget::Kind kind,
                       const config::Config &config);
// A target as a form writes it: one name, or for a pool "a, b, c".
QString targetText(const config::RouteTarget &target);
// The target a form's kind and text mean. `base` is kept, file position included, when they
// name the same target.
config::RouteTarget targetFromText(config::RouteTarget::Kind kind, const QString &text,
                                   const config::RouteTarget &base = {});

// Edits a rule's canary split: which request value keeps a client on one side, and the
// branches, each a target (provider, pool or tier) with a weight relative to the others. The
// edited value is the list of config::SplitBranch the engine validates; the widgets only show it.
// Adding or removing a branch rebuilds them, so their names follow the branch index.
class SplitEditor final : public QWidget {
    Q_OBJECT
public:
    // `snapshot` (the config in force, shared) gives the providers and tiers branches may target.
    explicit SplitEditor(std::shared_ptr<const config::Config> snapshot, QWidget *parent = nullptr);

    void setSplit(const QList<config::SplitBranch> &branches, config::SplitKey key);
    QList<config::SplitBranch> branches() const { return m_branches; }
    config::SplitKey key() const { return m_key; }

    // A new branch takes no traffic until its weight is raised, so adding one changes nothing.
    void addBranch();
    void removeBranch(int index);

Q_SIGNALS:
    void splitEdited();

protected:
    void changeEvent(QEvent *event) override;

private:
    void rebuild();
    void refreshShares();

    std::shared_ptr<const config::Config> m_snapshot;
    QList<config::SplitBranch> m_branches;
    config::SplitKey m_key = config::SplitKey::User;
    QVBoxLayout *m_layout = nullptr;
    QWidget *m_form = nullptr;
    QList<QLabel *> m_shares;
};

} // namespace switchyard::ui
