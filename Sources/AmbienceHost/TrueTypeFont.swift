import AmbiencePlatform
import CSDLTTF
import Synchronization

/// A TrueType font at one size. The only file in AmbienceHost that calls SDL_ttf.
///
/// Text renders white and anti-aliased; `Canvas.drawText` tints it. Used from the thread that draws.
public final class Font {
    /// DejaVu Sans, from Debian's `fonts-dejavu-core`.
    public static let dejaVuSans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

    private let font: OpaquePointer
    public let path: String
    public let pointSize: Int
    /// Tells fonts apart in a canvas's text cache (an address can be reused; this cannot).
    let serial: Int
    private static let serials = Atomic<Int>(0)

    public init(path: String = Font.dejaVuSans, size: Int) throws(HostError) {
        let points: Int32
        do { points = try size.checked(Int32.self, in: 1...1000, "font size") } catch { throw .invalidNumber(error) }
        // TTF_Init counts its callers; each font's deinit balances its own call.
        guard TTF_Init() == 0 else { throw .font(path: path, reason: String(cString: SDL_GetError())) }
        guard let font = TTF_OpenFont(path, points) else {
            let reason = String(cString: SDL_GetError())
            TTF_Quit()
            throw .font(path: path, reason: reason)
        }
        self.font = font
        self.path = path
        pointSize = size
        serial = Self.serials.add(1, ordering: .relaxed).newValue
    }

    deinit {
        TTF_CloseFont(font)
        TTF_Quit()
    }

    /// The distance from one baseline to the next.
    public var lineHeight: Int { Int(TTF_FontLineSkip(font)) }

    /// The size `text` takes when drawn.
    public func size(of text: String) -> Size {
        var w: Int32 = 0, h: Int32 = 0
        guard !text.isEmpty, TTF_SizeUTF8(font, text, &w, &h) == 0 else { return Size(0, Double(TTF_FontHeight(font))) }
        return Size(Double(w), Double(h))
    }

    /// Renders `text` in white and hands the surface to `body`; the surface is freed afterwards.
    func withRenderedText<R>(_ text: String, _ body: (UnsafeMutablePointer<SDL_Surface>) -> R) -> R? {
        guard let surface = TTF_RenderUTF8_Blended(font, text, SDL_Color(r: 255, g: 255, b: 255, a: 255)) else {
            return nil
        }
        defer { SDL_FreeSurface(surface) }
        return body(surface)
    }
}
