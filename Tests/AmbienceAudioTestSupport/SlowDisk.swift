import AmbiencePlatform
import Foundation

@testable import AmbienceCore
@testable import AmbienceTestSupport

/// Test doubles of the disk under the music player: it opens items through them (`MusicPlayer.setItemOpener`).

/// Which items were opened, in order.
final class OpenLog: Sendable {
    private let opened = Lock<[String]>([])
    func append(_ url: String) { opened.withLock { $0.append(url) } }
    var urls: [String] { opened.withLock { $0 } }
}

/// A real decoder behind a slow disk: every read waits `readDelay` seconds first.
final class ThrottledDecoder: AudioDecoder {
    private let decoder: any AudioDecoder
    private let readDelay: Double

    init(_ decoder: any AudioDecoder, readDelay: Double) {
        self.decoder = decoder
        self.readDelay = readDelay
    }

    var info: AudioInfo { decoder.info }
    var position: Int64 { decoder.position }

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        Thread.sleep(forTimeInterval: readDelay)
        return try decoder.read(into: buffer, frames: frames)
    }

    func seek(toFrame frame: Int64) throws(DecodingError) {
        Thread.sleep(forTimeInterval: readDelay)
        try decoder.seek(toFrame: frame)
    }
}
