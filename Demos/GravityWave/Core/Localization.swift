import AmbiencePlatform

/// The game's text in the user's language, through GNU gettext as glibc has it: `dgettext` on the catalogs in
/// `Assets/locale/<language>/LC_MESSAGES/gravity-wave.mo` (compiled by `msgfmt` from `Assets/locale/<language>.po`).
/// The English text is the message id, so English needs no catalog and is what any missing one falls back to.
///
/// gettext, not SwiftPM resources: it is what a Linux program uses (translators know the `.po` tools, and the
/// language follows `LANGUAGE`, `LC_ALL`, `LC_MESSAGES` and `LANG` the way every other program on the desktop does),
/// and it needs nothing beyond libc. The game's rule for the language is here; the calls are Platform's
/// (`ProcessLocale`, `MessageCatalog`).
public enum Localization {
    static let catalog = MessageCatalog(domain: "gravity-wave")

    /// Starts gettext for the `gravity-wave` program: the user's locale, the catalogs under `folder`, UTF-8 out
    /// whatever the locale's character set (SDL_ttf draws UTF-8). Returns the language asked for, or nil for none.
    ///
    /// glibc takes the messages' language from the locale, and a locale that is not installed is no locale at all
    /// (`setlocale` fails; gettext then answers in English). A language is more than its locale's data, so when the
    /// named locale is missing (a minimal system, a container) the game keeps the user's language: messages in
    /// C.UTF-8, and the language handed to gettext through `LANGUAGE`, which it honours in any locale but "C".
    /// Called once at start-up, before any thread: it sets the process's locale and environment.
    @discardableResult
    public static func start(catalogs folder: String, environment: [String: String]) -> String? {
        ProcessLocale.set(.all, to: "")
        let language = messagesLocale(environment: environment)
        if !ProcessLocale.set(.messages, to: ""), let language, environment["LANGUAGE"]?.isEmpty ?? true {
            ProcessLocale.set(.messages, to: "C.UTF-8")
            try? ProcessEnvironment.set("LANGUAGE", to: language)
        }
        catalog.bind(catalogs: folder)
        return language
    }

    /// The locale that names the messages' language, as POSIX orders the variables (`LC_ALL`, then `LC_MESSAGES`,
    /// then `LANG`), without its character set or modifier (`de_DE.UTF-8@euro` is `de_DE`); nil for none, C or POSIX.
    static func messagesLocale(environment: [String: String]) -> String? {
        let named = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        guard let named else { return nil }
        let language = String(named.prefix { $0 != "." && $0 != "@" })
        return language.isEmpty || language == "C" || language == "POSIX" ? nil : language
    }

    /// `english` in the user's language, with `{1}`, `{2}`… replaced by `arguments` (a translation may reorder them).
    static func text(_ english: String, _ arguments: [String]) -> String {
        var text = catalog.translation(of: english)
        for (index, argument) in arguments.enumerated() { text = text.replacing("{\(index + 1)}", with: argument) }
        return text
    }
}

/// The one way a user-visible string of the game is written: `localized("Add Music")`,
/// `localized("Now Playing: {1} by {2}", title, artist)`. The English text is the catalog's key.
func localized(_ english: String, _ arguments: String...) -> String {
    Localization.text(english, arguments)
}
