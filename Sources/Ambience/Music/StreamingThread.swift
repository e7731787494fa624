import Foundation
import Synchronization

/// The thread that keeps music decoded ahead, independent of the game loop's pace.
final class StreamingThread: Sendable {
    private let player: MusicPlayer
    private let running = Atomic<Bool>(false)
    private let finished = Lock<Bool>(true)

    init(player: MusicPlayer) { self.player = player }

    func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.withLock { $0 = false }
        let thread = Thread { [self] in
            // 6 buffers of 4096 frames hold about half a second: refilling every 10 ms keeps them full.
            while running.load(ordering: .relaxed) {
                player.pump()
                usleep(10_000)
            }
            finished.withLock { $0 = true }
        }
        thread.name = "ambience.streaming"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Stops the thread and waits for it to leave the player.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        while !finished.withLock({ $0 }) { usleep(1_000) }
    }
}
