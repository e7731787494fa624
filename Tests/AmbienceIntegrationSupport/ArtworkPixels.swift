import AmbienceHost

@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// How many of the HUD's cover pixels differ from the no-artwork tile, once the cover being read off the game thread
/// (`ArtworkLoader`) is there: 0 when the item has none, hundreds for a real cover.
func drawnArtworkDifference(_ game: GravityWave, on canvas: Canvas) throws -> Int {
    // The loader is for the item the first draw asks about; wait for it, then draw what it read.
    game.draw(canvas, alpha: 0)
    _ = eventually { game.nowPlayingArtwork.map { $0.picture != nil } ?? true }
    game.draw(canvas, alpha: 0)
    guard let picture = canvas.readPixels() else { return -1 }
    let rect = GravityWave.artworkRect, none = GravityWave.noArtwork
    var differing = 0
    for y in 0..<none.height {
        for x in 0..<none.width {
            let a = picture.color(x: Int(rect.x) + x, y: Int(rect.y) + y), b = none.color(x: x, y: y)
            if abs(Int(a.red) - Int(b.red)) + abs(Int(a.green) - Int(b.green)) + abs(Int(a.blue) - Int(b.blue)) > 6 {
                differing += 1
            }
        }
    }
    return differing
}
