import Foundation
import Testing

@testable import AmbienceTestSupport

/// The test tree's two rules (Tests/README.md), kept by a test so that a new file cannot quietly break them:
/// - one suite per file, named after it: a file declares at most one suite and is named after it, or it only adds
///   tests to one suite declared elsewhere and is named `Suite+Topic.swift`;
/// - folders mirror the sources: every folder in a test target is a folder of the code it tests.
@Suite(.offTheCooperativePool) struct TestTreeTests {
    @Test func everyFileHoldsOneSuiteNamedAfterIt() throws {
        var findings: [String] = []
        for target in try TestTree.targets() {
            for file in try TestTree.swiftFiles(in: target) {
                let text = try String(contentsOfFile: TestTree.root + "/" + file, encoding: .utf8)
                findings += TestTree.suiteFindings(path: file, text: text)
            }
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    @Test func foldersMirrorTheSources() throws {
        var findings: [String] = []
        for target in try TestTree.targets() {
            guard let sources = TestTree.sourceRoot(ofTestTarget: target) else {
                findings.append("\(target): no sources of that name to mirror")
                continue
            }
            for folder in try TestTree.folders(in: target) where !TestTree.isFolder(sources + "/" + folder) {
                findings.append("\(target)/\(folder): \(sources)/\(folder) is not a folder of the sources")
            }
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    /// The checker itself finds what it must: two suites in a file, a suite in a file of another name, a file adding
    /// tests to a suite it is not named after, a file that extends two suites. And it lets the good shapes pass.
    @Test func theCheckerFindsEachBrokenShape() {
        let twoSuites =
            "@Suite struct ATests {\n    @Test func a() {}\n}\n\nstruct BTests {\n    @Test func b() {}\n}\n"
        #expect(TestTree.suiteFindings(path: "T/ATests.swift", text: twoSuites).count == 1)
        #expect(TestTree.suiteFindings(path: "T/Other.swift", text: "@Suite struct ATests {}\n").count == 1)
        let extending = "extension ATests {\n    @Test func more() {}\n}\n"
        #expect(TestTree.suiteFindings(path: "T/ATests+More.swift", text: extending).isEmpty)
        #expect(TestTree.suiteFindings(path: "T/ATests+More.swift", text: extending + extending).isEmpty)
        #expect(TestTree.suiteFindings(path: "T/BTests+More.swift", text: extending).count == 1)
        let extendingTwo = extending + "extension BTests {\n    @Test func other() {}\n}\n"
        #expect(TestTree.suiteFindings(path: "T/ATests+More.swift", text: extendingTwo).count == 1)
        // Nested in the sound server's serial suite, with a helper type and a brace in a string beside it.
        let nested = """
            extension SoundServerSuites {
                @Suite(.serialized) struct CTests {
                    struct Row { var text = "{" }
                    @Test func c() {}
                }
            }
            enum Helper { static let brace = "}" }

            """
        #expect(TestTree.suiteFindings(path: "T/CTests.swift", text: nested).isEmpty)
        #expect(TestTree.suiteFindings(path: "T/Nested.swift", text: nested).count == 1)
        #expect(TestTree.suiteFindings(path: "T/Helpers.swift", text: "enum Helper {}\n").isEmpty)
        #expect(TestTree.sourceRoot(ofTestTarget: "AmbienceMixerTests") == "Sources/AmbienceMixer")
        #expect(TestTree.isFolder(TestTree.root + "/Sources/AmbienceMixer/Mixer"))
        #expect(!TestTree.isFolder(TestTree.root + "/Sources/AmbienceMixer/NoSuchFolder"))
    }
}

/// Reads the test tree: its targets, files and folders, and the suites a file declares.
enum TestTree {
    static let root = BuildProducts.root

    /// The test targets: the folders of Tests/ named `…Tests`. None found is a failure: the rules' tests would
    /// otherwise pass on nothing (a wrong root).
    static func targets() throws -> [String] {
        let targets = try FileManager.default.contentsOfDirectory(atPath: root + "/Tests").filter {
            $0.hasSuffix("Tests") && isFolder(root + "/Tests/" + $0)
        }.sorted().map { "Tests/" + $0 }
        #expect(!targets.isEmpty, "no test targets under \(root)/Tests")
        return targets
    }

    /// What a test target's folders mirror: the source target it is named after; the integration tests mirror
    /// Sources/ as a whole (a folder per target first), the C API's and the demo's their own code.
    static func sourceRoot(ofTestTarget target: String) -> String? {
        let name = String(target.split(separator: "/").last ?? "")
        let sources: String
        switch name {
        case "AmbienceIntegrationTests": sources = "Sources"
        case "AmbienceCAPITests": sources = "Sources/AmbienceC"
        case "GravityWaveCoreTests": sources = "Demos/GravityWave/Core"
        default: sources = "Sources/" + name.dropLast("Tests".count)
        }
        return isFolder(root + "/" + sources) ? sources : nil
    }

    static func isFolder(_ path: String) -> Bool {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && folder.boolValue
    }

    /// Paths below the package root of the target's Swift files.
    static func swiftFiles(in target: String) throws -> [String] {
        try entries(in: target).filter { $0.hasSuffix(".swift") }.map { target + "/" + $0 }
    }

    /// The target's folders, relative to it.
    static func folders(in target: String) throws -> [String] {
        try entries(in: target).filter { isFolder(root + "/" + target + "/" + $0) }
    }

    private static func entries(in target: String) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: root + "/" + target).sorted()
    }

    /// What breaks the rule of one suite per file, named after it, in the file at `path` holding `text`.
    static func suiteFindings(path: String, text: String) -> [String] {
        let name = String((path.split(separator: "/").last ?? "").dropLast(".swift".count))
        let shape = SuiteShape(text)
        if shape.suites.count > 1 {
            return ["\(path): \(shape.suites.count) suites (\(shape.suites.joined(separator: ", "))), one per file"]
        }
        if let suite = shape.suites.first {
            return suite == name ? [] : ["\(path): holds suite \(suite), so is named \(suite).swift"]
        }
        if shape.extended.count > 1 {
            return ["\(path): adds tests to \(shape.extended.joined(separator: " and ")): one suite per file"]
        }
        if let suite = shape.extended.first, !name.hasPrefix(suite + "+") {
            return ["\(path): adds tests to \(suite), so is named \(suite)+Topic.swift"]
        }
        return []
    }
}

/// The suites a Swift file declares, and the suites it adds tests to, from its text: types at the top level (or
/// directly in an extension, as the sound server's serial suites nest) marked `@Suite` or holding an `@Test`.
struct SuiteShape {
    private(set) var suites: [String] = []
    private(set) var extended: [String] = []

    init(_ text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { SuiteShape.code(String($0)) }
        var depth = 0
        var index = 0
        var inMultilineString = false
        var depths: [Int] = []
        for line in lines {
            depths.append(depth)
            if line.quoteCount % 2 == 1 { inMultilineString.toggle() }
            if !inMultilineString {
                depth += line.text.filter { $0 == "{" }.count - line.text.filter { $0 == "}" }.count
            }
        }
        depths.append(depth)
        var enclosingExtension: String?
        while index < lines.count {
            let line = lines[index].text.trimmingCharacters(in: .whitespaces)
            let lineDepth = depths[index]
            if lineDepth == 0 { enclosingExtension = SuiteShape.declared(line, kinds: ["extension"]) }
            guard lineDepth == 0 || (lineDepth == 1 && enclosingExtension != nil),
                let (kind, name) = SuiteShape.declaration(line)
            else {
                index += 1
                continue
            }
            // The body: up to the line where the depth falls back to this one's.
            var end = index + 1
            while end < lines.count && depths[end] > lineDepth { end += 1 }
            let marked =
                line.contains("@Suite") || (index > 0 && lines[index - 1].text.contains("@Suite"))
                || SuiteShape.attributeAbove(lines, index)
            if kind == "extension" {
                // Tests of its own (not only in the suites it nests) make it part of the suite it extends.
                let ownTests = (index..<end).contains {
                    depths[$0] == lineDepth + 1 && lines[$0].text.contains("@Test")
                }
                let suite = String(name.split(separator: ".").last ?? "")
                if ownTests && !extended.contains(suite) { extended.append(suite) }
                index += 1  // its nested types are read as the loop goes on
            } else {
                if marked || lines[index..<end].contains(where: { $0.text.contains("@Test") }) { suites.append(name) }
                index = end
            }
        }
    }

    /// A line with its comment and the contents of its one-line strings removed, and its count of `"""`.
    private static func code(_ line: String) -> (text: String, quoteCount: Int) {
        let quotes = line.components(separatedBy: "\"\"\"").count - 1
        var text = ""
        var inString = false
        var previous: Character = " "
        for character in line {
            if !inString && character == "/" && previous == "/" {
                text.removeLast()
                break
            }
            if character == "\"" && previous != "\\" { inString.toggle() }
            if !inString || character == "\"" { text.append(character) }
            previous = character
        }
        return (quotes > 0 ? "" : text, quotes)
    }

    /// Whether the lines above `index` are a multi-line `@Suite(` attribute ending in this declaration.
    private static func attributeAbove(_ lines: [(text: String, quoteCount: Int)], _ index: Int) -> Bool {
        var above = index - 1
        while above >= 0 {
            let text = lines[above].text.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("@Suite") { return true }
            guard text.hasPrefix(".") || text.hasPrefix(")") else { return false }
            above -= 1
        }
        return false
    }

    private static let kinds = ["struct", "enum", "class", "actor", "extension"]

    /// The kind and name a line declares, when it declares a type or an extension.
    private static func declaration(_ line: String) -> (kind: String, name: String)? {
        for kind in kinds {
            if let name = declared(line, kinds: [kind]) { return (kind, name) }
        }
        return nil
    }

    private static func declared(_ line: String, kinds: [String]) -> String? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "{" || $0 == ":" || $0 == "<" })
        guard let at = words.firstIndex(where: { kinds.contains(String($0)) }), at + 1 < words.count else { return nil }
        // Only attributes and modifiers may come before the keyword (`@Suite(...) struct`, `private final class`).
        let before = words[..<at].joined(separator: " ")
        let modifiers = ["private", "fileprivate", "package", "public", "internal", "final"]
        let allowed =
            words[..<at].allSatisfy { modifiers.contains(String($0)) || $0.hasPrefix("@") }
            || (before.hasPrefix("@Suite") && before.hasSuffix(")"))
        return allowed ? String(words[at + 1]) : nil
    }
}
