import Ambience
import AmbienceHost
import AmbiencePlatform
import Dispatch

/// The now-playing item's cover, read and scaled on a background queue: the game thread never waits on the disk (a
/// cover the system player names is a file anywhere, an embedded one is inside the song). The HUD shows the
/// no-artwork tile until it is there.
final class ArtworkLoader: Sendable {
    /// The item whose cover this is.
    let itemID: UInt64
    /// nil while being read; then the picture, or nil inside when the item has none.
    private let result = Lock<Picture??>(nil)

    init(_ item: MediaItem, side: Int) {
        itemID = item.persistentID
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let image = item.artwork?.image(size: ArtworkSize(width: side, height: side))
            let picture = image.flatMap { Picture(width: $0.width, height: $0.height, pixels: $0.pixels) }
            result.withLock { $0 = .some(picture) }
        }
    }

    /// The cover once read: nil while reading, `.some(nil)` when there is none.
    var picture: Picture?? { result.withLock { $0 } }
}
