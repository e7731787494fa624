import Ambience
import AmbiencePlatform
import Dispatch
import Synchronization

/// A library scan on a background thread; the game polls `isFinished` each update.
final class LibraryScan: Sendable {
    private let finished = Atomic<Bool>(false)
    private let outcome = Lock<String?>(nil)

    init(_ library: MediaLibrary) {
        DispatchQueue.global(qos: .utility).async { [self] in
            do {
                _ = try library.scan()
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
            finished.store(true, ordering: .releasing)
        }
    }

    var isFinished: Bool { finished.load(ordering: .acquiring) }
    var problem: String? { outcome.withLock { $0 } }
}
