import Ambience
import AmbiencePlatform
import CSDL2
import Glibc
import Synchronization

// The only file in AmbienceHost that calls SDL's video, event and render functions. Above it the game sees Swift
// types: `Canvas`, `HostEvent`, `Key`. (SDL_ttf lives in TrueTypeFont.swift, SDL_image in PictureFile.swift.)

/// Why the host could not do something. Each case says what it was doing and SDL's reason.
public enum HostError: Error, CustomStringConvertible, Sendable, Equatable {
    /// SDL refused: `what` is the step ("video driver x11", "window", "renderer").
    case sdl(what: String, reason: String)
    case font(path: String, reason: String)
    case picture(path: String, reason: String)
    /// A number in the host's configuration was NaN, infinite or out of its range; nothing was opened.
    case invalidNumber(InvalidNumber)

    public var description: String {
        switch self {
        case .invalidNumber(let e): e.description
        case .sdl(let what, let reason): "SDL \(what): \(reason)"
        case .font(let path, let reason): "\(path): cannot open font (\(reason))"
        case .picture(let path, let reason): "\(path): cannot write picture (\(reason))"
        }
    }
}

/// Bytes red, green, blue, alpha in memory (SDL_PIXELFORMAT_RGBA32). Asked of SDL by its masks: with three SDL
/// modules in this target, the pixel-format enumerators are not visible through CSDL2 alone.
let rgba32 = SDL_MasksToPixelFormatEnum(32, 0x0000_00FF, 0x0000_FF00, 0x00FF_0000, 0xFF00_0000)

/// A window's, canvas's or picture's size as SDL takes it: 1…16384 pixels a side, or a refusal.
func pixelSize(_ width: Int, _ height: Int) throws(HostError) -> (Int32, Int32) {
    do {
        return (
            try width.checked(Int32.self, in: 1...16_384, "width"),
            try height.checked(Int32.self, in: 1...16_384, "height")
        )
    } catch {
        throw .invalidNumber(error)
    }
}

func sdlError() -> String {
    guard let message = SDL_GetError() else { return "unknown SDL error" }
    let text = String(cString: message)
    return text.isEmpty ? "unknown SDL error" : text
}

// MARK: - Subsystems

/// SDL's event (and, when a window is wanted, video) subsystems, initialised for the host's lifetime.
final class SDLSubsystems {
    private let flags: UInt32
    /// The video driver in use, or nil without video.
    let videoDriver: String?

    /// Events only: Ctrl-C and SIGTERM arrive as `.quit`.
    init() throws(HostError) {
        flags = UInt32(SDL_INIT_EVENTS)
        guard SDL_InitSubSystem(flags) == 0 else { throw .sdl(what: "events", reason: sdlError()) }
        videoDriver = nil
    }

    /// Video and events with the first driver of `candidates` that initialises.
    init(videoDrivers candidates: [String]) throws(HostError) {
        var reasons: [String] = []
        for driver in candidates {
            SDL_SetHint(SDL_HINT_VIDEODRIVER, driver)
            let flags = UInt32(SDL_INIT_VIDEO) | UInt32(SDL_INIT_EVENTS)
            if SDL_InitSubSystem(flags) == 0 {
                self.flags = flags
                videoDriver = SDL_GetCurrentVideoDriver().map { String(cString: $0) } ?? driver
                return
            }
            reasons.append("\(driver): \(sdlError())")
        }
        throw .sdl(what: "video (tried \(candidates.joined(separator: ", ")))", reason: reasons.joined(separator: "; "))
    }

    deinit { SDL_QuitSubSystem(flags) }

    /// Every pending event, translated. SDL's audio device events become `.audioDevicesChanged`: the engine polls
    /// its own device in `update()`, so the host only has to keep calling it.
    func pollEvents() -> [HostEvent] {
        var events: [HostEvent] = []
        var event = SDL_Event()
        while SDL_PollEvent(&event) != 0 {
            if let translated = translate(event) { events.append(translated) }
        }
        return events
    }

    private func translate(_ event: SDL_Event) -> HostEvent? {
        switch event.type {
        case SDL_QUIT.rawValue:
            return .quit
        case SDL_KEYDOWN.rawValue:
            return .keyDown(key(event.key.keysym.sym), isRepeat: event.key.repeat != 0)
        case SDL_KEYUP.rawValue:
            return .keyUp(key(event.key.keysym.sym))
        case SDL_TEXTINPUT.rawValue:
            var text = event.text.text
            let string = withUnsafeBytes(of: &text) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            return .text(string)
        case SDL_MOUSEBUTTONDOWN.rawValue:
            return .mouseDown(Point(Double(event.button.x), Double(event.button.y)), button: Int(event.button.button))
        case SDL_MOUSEBUTTONUP.rawValue:
            return .mouseUp(Point(Double(event.button.x), Double(event.button.y)), button: Int(event.button.button))
        case SDL_MOUSEMOTION.rawValue:
            return .mouseMoved(Point(Double(event.motion.x), Double(event.motion.y)))
        case SDL_MOUSEWHEEL.rawValue:
            return .mouseWheel(Int(event.wheel.y))
        case SDL_WINDOWEVENT.rawValue:
            return windowChange(event.window).map(HostEvent.window)
        case SDL_APP_WILLENTERBACKGROUND.rawValue: return .app(.willEnterBackground)
        case SDL_APP_DIDENTERBACKGROUND.rawValue: return .app(.didEnterBackground)
        case SDL_APP_WILLENTERFOREGROUND.rawValue: return .app(.willEnterForeground)
        case SDL_APP_DIDENTERFOREGROUND.rawValue: return .app(.didEnterForeground)
        case SDL_APP_LOWMEMORY.rawValue: return .app(.lowMemory)
        case SDL_APP_TERMINATING.rawValue: return .app(.terminating)
        case SDL_AUDIODEVICEADDED.rawValue, SDL_AUDIODEVICEREMOVED.rawValue:
            return .audioDevicesChanged
        default:
            return nil
        }
    }

    private func windowChange(_ event: SDL_WindowEvent) -> WindowChange? {
        switch UInt32(event.event) {
        case SDL_WINDOWEVENT_SHOWN.rawValue: .shown
        case SDL_WINDOWEVENT_HIDDEN.rawValue: .hidden
        case SDL_WINDOWEVENT_EXPOSED.rawValue: .exposed
        case SDL_WINDOWEVENT_MINIMIZED.rawValue: .minimized
        case SDL_WINDOWEVENT_MAXIMIZED.rawValue: .maximized
        case SDL_WINDOWEVENT_RESTORED.rawValue: .restored
        case SDL_WINDOWEVENT_FOCUS_GAINED.rawValue: .focusGained
        case SDL_WINDOWEVENT_FOCUS_LOST.rawValue: .focusLost
        case SDL_WINDOWEVENT_SIZE_CHANGED.rawValue: .resized(width: Int(event.data1), height: Int(event.data2))
        case SDL_WINDOWEVENT_CLOSE.rawValue: .close
        default: nil
        }
    }

    private func key(_ code: SDL_Keycode) -> Key {
        func sdl(_ k: SDL_KeyCode) -> SDL_Keycode { SDL_Keycode(truncatingIfNeeded: k.rawValue) }
        switch code {
        case sdl(SDLK_LEFT): return .left
        case sdl(SDLK_RIGHT): return .right
        case sdl(SDLK_UP): return .up
        case sdl(SDLK_DOWN): return .down
        case sdl(SDLK_SPACE): return .space
        case sdl(SDLK_ESCAPE): return .escape
        case sdl(SDLK_RETURN), sdl(SDLK_KP_ENTER): return .enter
        case sdl(SDLK_BACKSPACE): return .backspace
        case sdl(SDLK_TAB): return .tab
        case sdl(SDLK_DELETE): return .delete
        case sdl(SDLK_HOME): return .home
        case sdl(SDLK_END): return .end
        case sdl(SDLK_PAGEUP): return .pageUp
        case sdl(SDLK_PAGEDOWN): return .pageDown
        case sdl(SDLK_F1)...sdl(SDLK_F12): return .function(Int(code - sdl(SDLK_F1)) + 1)
        case 33...126: return .character(Character(Unicode.Scalar(UInt8(code))))
        default: return .other(code)
        }
    }
}

// MARK: - Window

/// A window with a renderer, drawn through its `canvas`.
final class Window {
    private let window: OpaquePointer
    let canvas: Canvas

    init(title: String, width: Int, height: Int, vsync: Bool) throws(HostError) {
        let flags = SDL_WINDOW_SHOWN.rawValue | SDL_WINDOW_RESIZABLE.rawValue
        let (w, h) = try pixelSize(width, height)
        guard
            let window = SDL_CreateWindow(
                title, Int32(SDL_WINDOWPOS_UNDEFINED_MASK), Int32(SDL_WINDOWPOS_UNDEFINED_MASK),
                w, h, flags)
        else {
            throw .sdl(what: "window", reason: sdlError())
        }
        self.window = window
        let accelerated = SDL_RENDERER_ACCELERATED.rawValue | (vsync ? SDL_RENDERER_PRESENTVSYNC.rawValue : 0)
        guard
            let renderer = SDL_CreateRenderer(window, -1, accelerated)
                ?? SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue)
        else {
            let reason = sdlError()
            SDL_DestroyWindow(window)
            throw .sdl(what: "renderer", reason: reason)
        }
        canvas = Canvas(renderer: renderer, width: width, height: height, surface: nil)
        SDL_StartTextInput()
    }

    deinit {
        canvas.destroy()
        SDL_DestroyWindow(window)
    }
}

// MARK: - Canvas

/// Draws into a window (or an offscreen picture) in logical pixels, whatever the window's real size.
///
/// Text and pictures are turned into textures once and kept while they are drawn; ones not drawn for a few seconds
/// are released. Used from the thread that created it.
public final class Canvas {
    private var renderer: OpaquePointer?
    /// The surface an offscreen canvas draws into.
    private let surface: UnsafeMutablePointer<SDL_Surface>?
    /// The logical size every drawing call uses.
    public let width: Int
    public let height: Int
    /// The renderer's name ("opengl", "software").
    public let rendererName: String

    private struct CachedText {
        var texture: OpaquePointer
        var width: Int32
        var height: Int32
        var lastUsed: Int
    }
    private struct CachedPicture {
        weak var picture: Picture?
        var texture: OpaquePointer
        var lastUsed: Int
    }
    private struct TextKey: Hashable {
        var font: Int
        var text: String
    }
    private var texts: [TextKey: CachedText] = [:]
    private var pictures: [ObjectIdentifier: CachedPicture] = [:]
    private var frame = 0
    /// Frames a texture may go undrawn before it is released.
    private static let keepFrames = 180

    fileprivate init(renderer: OpaquePointer, width: Int, height: Int, surface: UnsafeMutablePointer<SDL_Surface>?) {
        self.renderer = renderer
        self.surface = surface
        self.width = width
        self.height = height
        var info = SDL_RendererInfo()
        rendererName = SDL_GetRendererInfo(renderer, &info) == 0 ? info.name.map { String(cString: $0) } ?? "?" : "?"
        if surface == nil, let (w, h) = try? pixelSize(width, height) { SDL_RenderSetLogicalSize(renderer, w, h) }
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
    }

    /// A canvas that draws into memory with SDL's software renderer: no display or video driver needed.
    public convenience init(offscreenWidth width: Int, height: Int) throws(HostError) {
        let (w, h) = try pixelSize(width, height)
        guard let surface = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, rgba32) else {
            throw .sdl(what: "offscreen surface", reason: sdlError())
        }
        guard let renderer = SDL_CreateSoftwareRenderer(surface) else {
            let reason = sdlError()
            SDL_FreeSurface(surface)
            throw .sdl(what: "software renderer", reason: reason)
        }
        self.init(renderer: renderer, width: width, height: height, surface: surface)
    }

    deinit {
        destroy()
        if let surface { SDL_FreeSurface(surface) }
    }

    /// Releases the textures and the renderer (before the window that owns it goes).
    fileprivate func destroy() {
        guard let renderer else { return }
        for entry in texts.values { SDL_DestroyTexture(entry.texture) }
        for entry in pictures.values { SDL_DestroyTexture(entry.texture) }
        texts.removeAll()
        pictures.removeAll()
        SDL_DestroyRenderer(renderer)
        self.renderer = nil
    }

    private func setColor(_ color: Color) {
        SDL_SetRenderDrawColor(renderer, color.red, color.green, color.blue, color.alpha)
    }

    private static func frect(_ rect: Rect) -> SDL_FRect {
        SDL_FRect(x: Float(rect.x), y: Float(rect.y), w: Float(rect.width), h: Float(rect.height))
    }

    public func clear(_ color: Color) {
        setColor(color)
        SDL_RenderClear(renderer)
    }

    public func fillRect(_ rect: Rect, _ color: Color) {
        setColor(color)
        var r = Self.frect(rect)
        SDL_RenderFillRectF(renderer, &r)
    }

    public func strokeRect(_ rect: Rect, _ color: Color) {
        setColor(color)
        var r = Self.frect(rect)
        SDL_RenderDrawRectF(renderer, &r)
    }

    public func drawLine(from a: Point, to b: Point, _ color: Color) {
        setColor(color)
        SDL_RenderDrawLineF(renderer, Float(a.x), Float(a.y), Float(b.x), Float(b.y))
    }

    /// A connected line through `points`.
    public func drawPolyline(_ points: [Point], _ color: Color) {
        guard points.count > 1 else { return }
        setColor(color)
        let fpoints = points.map { SDL_FPoint(x: Float($0.x), y: Float($0.y)) }
        _ = fpoints.withUnsafeBufferPointer {
            SDL_RenderDrawLinesF(renderer, $0.baseAddress, Int32(clamping: $0.count))
        }
    }

    public func fillCircle(center: Point, radius: Double, _ color: Color) {
        // No screen is taller than 16384 rows: a larger (or infinite) radius draws that much, never traps.
        guard radius > 0, radius.isFinite else { return }
        setColor(color)
        let r = min(radius, 16_384).saturated(Int.self, rounding: .up)
        var rows: [SDL_FRect] = []
        rows.reserveCapacity(2 * r + 1)
        for dy in -r...r {
            let y = Double(dy) + 0.5
            let half = (radius * radius - y * y).squareRoot()
            guard half > 0 else { continue }
            rows.append(SDL_FRect(x: Float(center.x - half), y: Float(center.y + Double(dy)), w: Float(2 * half), h: 1))
        }
        _ = rows.withUnsafeBufferPointer { SDL_RenderFillRectsF(renderer, $0.baseAddress, Int32(clamping: $0.count)) }
    }

    public func strokeCircle(center: Point, radius: Double, _ color: Color) {
        guard radius > 0, radius.isFinite else { return }
        let segments = max(12, Int(min(radius, 96)))  // finite and positive: at most 96 fits
        let points = (0...segments).map { i -> Point in
            let a = Double(i) / Double(segments) * 2 * Double.pi
            return Point(center.x + radius * cos(a), center.y + radius * sin(a))
        }
        drawPolyline(points, color)
    }

    /// Draws one line of text; returns its size. Empty text draws nothing.
    @discardableResult
    public func drawText(
        _ text: String, at point: Point, font: Font, color: Color = .white, anchor: TextAnchor = .topLeft
    ) -> Size {
        guard !text.isEmpty, let entry = textTexture(text, font: font) else { return Size(0, 0) }
        let w = Double(entry.width), h = Double(entry.height)
        let origin: Point =
            switch anchor {
            case .topLeft: point
            case .topCenter: Point(point.x - w / 2, point.y)
            case .topRight: Point(point.x - w, point.y)
            case .center: Point(point.x - w / 2, point.y - h / 2)
            case .centerLeft: Point(point.x, point.y - h / 2)
            case .centerRight: Point(point.x - w, point.y - h / 2)
            }
        SDL_SetTextureColorMod(entry.texture, color.red, color.green, color.blue)
        SDL_SetTextureAlphaMod(entry.texture, color.alpha)
        var destination = Self.frect(Rect(origin.x.rounded(), origin.y.rounded(), w, h))
        SDL_RenderCopyF(renderer, entry.texture, nil, &destination)
        return Size(w, h)
    }

    private func textTexture(_ text: String, font: Font) -> CachedText? {
        let key = TextKey(font: font.serial, text: text)
        if var entry = texts[key] {
            entry.lastUsed = frame
            texts[key] = entry
            return entry
        }
        let made: CachedText? =
            font.withRenderedText(text) { surface in
                guard let texture = SDL_CreateTextureFromSurface(renderer, surface) else { return nil }
                SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_BLEND)
                return CachedText(
                    texture: texture, width: surface.pointee.w, height: surface.pointee.h, lastUsed: frame)
            } ?? nil
        if let made { texts[key] = made }
        return made
    }

    /// Draws RGBA pixels scaled into `rect`.
    public func drawImage(_ picture: Picture, in rect: Rect) {
        let id = ObjectIdentifier(picture)
        var texture: OpaquePointer
        if let entry = pictures[id], entry.picture === picture {
            texture = entry.texture
        } else {
            if let stale = pictures[id] { SDL_DestroyTexture(stale.texture) }
            guard
                let made = SDL_CreateTexture(
                    renderer, rgba32, Int32(SDL_TEXTUREACCESS_STATIC.rawValue),
                    Int32(picture.width), Int32(picture.height))
            else { return }
            picture.pixels.withUnsafeBytes {
                _ = SDL_UpdateTexture(made, nil, $0.baseAddress, Int32(picture.width * 4))
            }
            SDL_SetTextureBlendMode(made, SDL_BLENDMODE_BLEND)
            texture = made
        }
        pictures[id] = CachedPicture(picture: picture, texture: texture, lastUsed: frame)
        var destination = Self.frect(rect)
        SDL_RenderCopyF(renderer, texture, nil, &destination)
    }

    /// What has been drawn so far this frame, at the canvas's logical size. Call it before the frame is presented
    /// (from the draw closure). Nil when the renderer cannot read back.
    public func readPixels() -> Picture? {
        if let surface {
            guard SDL_LockSurface(surface) == 0, let base = surface.pointee.pixels else { return nil }
            defer { SDL_UnlockSurface(surface) }
            let pitch = Int(surface.pointee.pitch)
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            pixels.withUnsafeMutableBytes { out in
                for row in 0..<height {
                    out.baseAddress!.advanced(by: row * width * 4).copyMemory(
                        from: base.advanced(by: row * pitch), byteCount: width * 4)
                }
            }
            return Picture(width: width, height: height, pixels: pixels)
        }
        // The window's real size may differ from the logical one: read it all, then scale to the logical size.
        var outW: Int32 = 0, outH: Int32 = 0
        guard SDL_GetRendererOutputSize(renderer, &outW, &outH) == 0, outW > 0, outH > 0 else { return nil }
        var raw = [UInt8](repeating: 0, count: Int(outW) * Int(outH) * 4)
        let status = raw.withUnsafeMutableBytes {
            SDL_RenderReadPixels(renderer, nil, rgba32, $0.baseAddress, outW * 4)
        }
        guard status == 0 else { return nil }
        if Int(outW) == width && Int(outH) == height { return Picture(width: width, height: height, pixels: raw) }
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let sy = min(Int(outH) - 1, y * Int(outH) / height)
            for x in 0..<width {
                let sx = min(Int(outW) - 1, x * Int(outW) / width)
                let s = (sy * Int(outW) + sx) * 4, d = (y * width + x) * 4
                pixels[d] = raw[s]; pixels[d + 1] = raw[s + 1]; pixels[d + 2] = raw[s + 2]; pixels[d + 3] = raw[s + 3]
            }
        }
        return Picture(width: width, height: height, pixels: pixels)
    }

    /// Shows the frame and releases textures that were not drawn for a while.
    func present() {
        SDL_RenderPresent(renderer)
        frame += 1
        guard frame % 60 == 0 else { return }
        for (key, entry) in texts where frame - entry.lastUsed > Self.keepFrames {
            SDL_DestroyTexture(entry.texture)
            texts[key] = nil
        }
        for (key, entry) in pictures where entry.picture == nil || frame - entry.lastUsed > Self.keepFrames {
            SDL_DestroyTexture(entry.texture)
            pictures[key] = nil
        }
    }
}
