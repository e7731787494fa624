import Foundation
import Synchronization

// What the README's thirty seconds of Swift (main.swift, kept identical to the README by ReadmeTests) leave to the
// game: its loop condition and its alert. The loop runs at 60 Hz for AMBIENCE_EXAMPLE_SECONDS (default 3).

private let framesLeft = Mutex(
    Int((Double(ProcessInfo.processInfo.environment["AMBIENCE_EXAMPLE_SECONDS"] ?? "") ?? 3) * 60))

/// True for as many 60 Hz frames as the example should run; each call but the first waits out one frame.
var gameIsRunning: Bool {
    let left = framesLeft.withLock { left in
        defer { left -= 1 }
        return left
    }
    if left > 0 { Thread.sleep(forTimeInterval: 1.0 / 60) }
    return left > 0
}

func showAlert(_ message: String) { print("Alert:", message) }
