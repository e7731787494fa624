import Glibc

/// Why an optional shared library, or a function in it, could not be used: the library, the function when it was
/// one, and the dynamic loader's own words (`dlerror`).
package struct SharedLibraryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name the library was opened by (its soname, such as `libpulse.so.0`).
    package var library: String
    /// The function that was looked up, when the library opened but lacks it.
    package var function: String?
    package var reason: String

    package var description: String {
        if let function { return "\(library) has no \(function) (\(reason))" }
        return "\(library) could not be loaded (\(reason))"
    }
}

/// A shared library opened at run time with `dlopen`: the one place the engine calls the dynamic loader.
///
/// Opened with `RTLD_NOW | RTLD_LOCAL`: every reference is bound at once, so a library that would fail later fails
/// here, and its symbols stay out of the global namespace. It is never closed: the function pointers taken from it
/// (and the threads a library such as libpulse starts) must stay valid for the life of the process.
package final class SharedLibrary: @unchecked Sendable {  // the handle is only read
    package let name: String
    private let handle: UnsafeMutableRawPointer

    /// Opens `name` (a soname: the loader searches its usual paths). Throws with `dlerror`'s text when it is
    /// missing, unreadable, not a library, or needs a library that is.
    package init(_ name: String) throws(SharedLibraryError) {
        _ = dlerror()  // a stale message from an earlier call must not be taken for this one's
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            throw SharedLibraryError(library: name, function: nil, reason: SharedLibrary.loaderMessage())
        }
        self.name = name
        self.handle = handle
    }

    /// The address of the function `symbol`. Throws, naming it, when the library has no such symbol.
    package func address(of symbol: String) throws(SharedLibraryError) -> UnsafeMutableRawPointer {
        _ = dlerror()
        guard let address = dlsym(handle, symbol) else {
            throw SharedLibraryError(library: name, function: symbol, reason: SharedLibrary.loaderMessage())
        }
        return address
    }

    /// Looks up every function of a table: `Table` is a C struct made only of function pointers, and `names` lists
    /// its fields' names in order, one a line (the C target's header makes both from one list, so they agree).
    /// The first function the library lacks fails the whole table, by name.
    package func functions<Table>(_ table: Table.Type, names: String) throws(SharedLibraryError) -> Table {
        let symbols = names.split(separator: "\n").map(String.init)
        let pointerSize = MemoryLayout<UnsafeMutableRawPointer>.stride
        guard !symbols.isEmpty, MemoryLayout<Table>.size == symbols.count * pointerSize else {
            throw SharedLibraryError(
                library: name, function: nil,
                reason:
                    "the function table holds \(MemoryLayout<Table>.size / pointerSize) pointers for \(symbols.count) names"
            )
        }
        let storage = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<Table>.size, alignment: MemoryLayout<Table>.alignment)
        defer { storage.deallocate() }
        for (index, symbol) in symbols.enumerated() {
            storage.storeBytes(
                of: try address(of: symbol), toByteOffset: index * pointerSize, as: UnsafeMutableRawPointer.self)
        }
        return storage.load(as: Table.self)
    }

    private static func loaderMessage() -> String {
        guard let message = dlerror() else { return "no reason given" }
        return String(cString: message)
    }
}

/// A library the engine can do without, opened the first time it is needed: its function table once loaded, or
/// why it could not be. The table is read-only function pointers, so it is shared by every thread.
package final class OptionalLibrary<Table>: @unchecked Sendable {
    /// The soname the library is opened by.
    package let name: String
    /// What the engine does with it, for the capabilities report ("PulseAudio route detail").
    package let feature: String
    package let loaded: Result<Table, SharedLibraryError>

    package init(name: String, feature: String, names: String, then setUp: (Table) -> String? = { _ in nil }) {
        self.name = name
        self.feature = feature
        loaded = Result { () throws(SharedLibraryError) -> Table in
            let table = try SharedLibrary(name).functions(Table.self, names: names)
            if let failure = setUp(table) { throw SharedLibraryError(library: name, function: nil, reason: failure) }
            return table
        }
    }

    /// The table, or why there is none.
    package func functions() throws(SharedLibraryError) -> Table { try loaded.get() }

    /// Why the library is unavailable; nil when it loaded.
    package var failure: SharedLibraryError? {
        if case .failure(let error) = loaded { return error }
        return nil
    }
}
