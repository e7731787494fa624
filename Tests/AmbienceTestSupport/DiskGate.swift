import Foundation

/// A gate an opener waits at until the test opens it: a disk that does not answer.
final class DiskGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false

    func pass() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}
