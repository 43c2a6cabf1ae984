#include "timing/loop_turn.h"

#include <QAbstractEventDispatcher>
#include <time.h>

namespace switchyard::timing {

namespace {

qint64 monotonicNs()
{
    // The raw call, not std::chrono: it is read for every accept and every request started.
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return qint64(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

} // namespace

LoopTurn::LoopTurn(QObject *parent) : QObject(parent) {}

void LoopTurn::follow()
{
    QAbstractEventDispatcher *current = QAbstractEventDispatcher::instance();
    if (current == m_dispatcher)
        return;
    disconnect(m_awake);
    m_dispatcher = current;
    if (!current)
        return;
    // Direct: the signal is emitted on the loop's thread, at the very start of each pass.
    m_awake = connect(
        current, &QAbstractEventDispatcher::awake, this, [this] { begin(); }, Qt::DirectConnection);
    begin();
}

void LoopTurn::begin()
{
    ++m_number;
    m_beganNs = monotonicNs();
}

quint64 LoopTurn::number()
{
    follow();
    return m_number;
}

std::chrono::nanoseconds LoopTurn::elapsed()
{
    follow();
    return std::chrono::nanoseconds(monotonicNs() - m_beganNs);
}

bool TurnBudget::spent()
{
    const quint64 turn = m_turn.number();
    if (turn != m_turnNumber) {
        m_turnNumber = turn;
        m_taken = 0;
    }
    return m_taken > 0 && (m_taken >= m_perTurn || m_turn.elapsed() >= m_within);
}

bool TurnBudget::take()
{
    if (spent())
        return false;
    ++m_taken;
    return true;
}

} // namespace switchyard::timing
