import Foundation
import Glibc

/// A fresh folder under the temporary directory for one test, removed when `body` returns.
func withScratchFolder<R>(_ label: String, _ body: (String) throws -> R) throws -> R {
    let folder = NSTemporaryDirectory() + "ambience-\(label)-\(getpid())-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    return try body(folder)
}
