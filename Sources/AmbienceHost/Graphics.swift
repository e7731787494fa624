import Ambience
import AmbiencePlatform

/// An 8-bit RGBA colour.
public struct Color: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// A colour from hue (0…1, wrapping), saturation and value (0…1). A non-finite hue is red.
    public init(hue: Double, saturation: Double, value: Double, alpha: UInt8 = 255) {
        let h = hue.isFinite ? (hue - hue.rounded(.down)) * 6 : 0
        let sector = h.saturated(Int.self, rounding: .down) % 6
        let f = h - h.rounded(.down)
        let p = value * (1 - saturation), q = value * (1 - saturation * f), t = value * (1 - saturation * (1 - f))
        let (r, g, b): (Double, Double, Double) =
            switch sector {
            case 0: (value, t, p)
            case 1: (q, value, p)
            case 2: (p, value, t)
            case 3: (p, q, value)
            case 4: (t, p, value)
            default: (value, p, q)
            }
        func byte(_ x: Double) -> UInt8 { UInt8(clamping: (x * 255).saturated(Int.self)) }  // NaN is 0
        self.init(byte(r), byte(g), byte(b), alpha)
    }

    public func withAlpha(_ alpha: UInt8) -> Color { Color(red, green, blue, alpha) }

    public static let white = Color(255, 255, 255)
    public static let black = Color(0, 0, 0)
    public static let clear = Color(0, 0, 0, 0)
}

public struct Point: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public init(_ x: Double, _ y: Double) { self.x = x; self.y = y }
}

public struct Size: Sendable, Hashable {
    public var width: Double
    public var height: Double
    public init(_ width: Double, _ height: Double) { self.width = width; self.height = height }
}

public struct Rect: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(_ x: Double, _ y: Double, _ width: Double, _ height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var center: Point { Point(x + width / 2, y + height / 2) }
    public func contains(_ p: Point) -> Bool { p.x >= x && p.x < maxX && p.y >= y && p.y < maxY }
    public func insetBy(_ dx: Double, _ dy: Double) -> Rect { Rect(x + dx, y + dy, width - 2 * dx, height - 2 * dy) }
}

/// Where `Canvas.drawText` puts the text relative to the point given.
public enum TextAnchor: Sendable {
    case topLeft, topCenter, topRight, center, centerLeft, centerRight
}

/// RGBA pixels, 4 bytes each (red, green, blue, alpha), row after row, top row first. A class, so a canvas can keep
/// one texture per picture for as long as the picture lives.
public final class Picture: Sendable {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    /// Nil when `pixels` does not hold exactly `width * height * 4` bytes or a side is not positive.
    public init?(width: Int, height: Int, pixels: [UInt8]) {
        let (area, overflow) = width.multipliedReportingOverflow(by: height)
        guard width > 0, height > 0, !overflow, area <= Int.max / 4, pixels.count == area * 4 else { return nil }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The RGBA colour at (x, y).
    public func color(x: Int, y: Int) -> Color {
        let i = (y * width + x) * 4
        return Color(pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }
}
