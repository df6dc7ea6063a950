package io.agentenv.cli;

import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code aenv auth}: saves the API URL and key for later commands ({@code login}), shows which are in use and whether
 * the server accepts them ({@code status}), and forgets them ({@code logout}). The key is never printed.
 */
@Command(
        name = "auth",
        mixinStandardHelpOptions = true,
        subcommands = CommandLine.HelpCommand.class,
        description = {
            "Save the API URL and key for later commands (login, status, logout).",
            "The file is $XDG_CONFIG_HOME/aenv/config, else ~/.config/aenv/config",
            "(mode 0600); --api-url/--api-key and AENV_API_URL/AENV_API_KEY win over it."
        })
final class AuthCommand {
    @ParentCommand
    private Aenv aenv;

    @Command(
            name = "login",
            mixinStandardHelpOptions = true,
            description = {
                "Check the key with the server and save it with the URL.",
                "The key is --api-key, else $AENV_API_KEY, else read from stdin (typed",
                "without echo on a terminal; 'aenv auth login < keyfile' keeps it out of",
                "the shell's history). The URL is --api-url, else $AENV_API_URL, else the",
                "saved one, else the default."
            })
    int login(
            @Option(names = "--no-verify", description = "Save without asking the server (e.g. while it is down).")
                    boolean noVerify) {
        Aenv.Setting url = aenv.apiUrl();
        URI base = Aenv.baseUri(url.value());
        String key = aenv.apiKey()
                .filter(k -> !k.source().equals(aenv.userConfig().file().toString()))
                .map(Aenv.Setting::value)
                .orElseGet(this::readKey)
                .strip();
        if (key.isEmpty()) {
            throw new IllegalArgumentException("no API key given");
        }
        if (!noVerify) {
            aenv.client(base, key).verify();
        }
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put(UserConfig.URL, base.toString());
        settings.put(UserConfig.KEY, key);
        aenv.userConfig().write(settings);
        return aenv.say("logged in to " + base + (noVerify ? " (not verified)" : "") + "; saved in "
                + aenv.userConfig().file());
    }

    @Command(
            name = "status",
            mixinStandardHelpOptions = true,
            description = {
                "Show the URL and key in use (and where each comes from), and whether",
                "the server accepts the key. Exit code 1 when there is no key or the server",
                "refused it."
            })
    int status() {
        Aenv.Setting url = aenv.apiUrl();
        Optional<Aenv.Setting> key = aenv.apiKey();
        String verdict;
        int code = 0;
        if (key.isEmpty()) {
            verdict = "no API key (aenv auth login)";
            code = 1;
        } else {
            try {
                aenv.client().verify();
                verdict = "the server accepts the key";
            } catch (ApiException e) {
                verdict = (e.status() == 401 ? "the server refused the key: " : "") + e.getMessage();
                code = 1;
            }
        }
        if (aenv.output() == Aenv.Output.json) {
            Map<String, Object> status = new LinkedHashMap<>();
            status.put("apiUrl", url.value());
            status.put("apiUrlSource", url.source());
            status.put("apiKeySet", key.isPresent());
            status.put("apiKeySource", key.map(Aenv.Setting::source).orElse(null));
            status.put("configFile", aenv.userConfig().file().toString());
            status.put("ok", code == 0);
            status.put("message", verdict);
            aenv.printJson(status);
            return code;
        }
        new Table("SETTING", "VALUE")
                .row("api url", url.value() + " (" + url.source() + ")")
                .row("api key", key.map(k -> "set (" + k.source() + ")").orElse("not set"))
                .row("config file", aenv.userConfig().file())
                .row("server", verdict)
                .print(aenv.out());
        return code;
    }

    @Command(
            name = "logout",
            mixinStandardHelpOptions = true,
            description = "Delete the saved URL and key (the config file).")
    int logout() {
        boolean deleted = aenv.userConfig().delete();
        return aenv.say(
                deleted
                        ? "removed " + aenv.userConfig().file()
                        : "not logged in (no " + aenv.userConfig().file() + ")");
    }

    /** The key from stdin: typed without echo on a terminal, else its first line. */
    @SuppressWarnings("SystemConsoleNull") // stdin was found to be a terminal; null only where a JDK has no console
    private String readKey() {
        if (aenv.stdio().stdinIsTerminal()) {
            Console console = System.console();
            if (console == null) {
                throw new IllegalArgumentException("no API key: pass it on stdin or set AENV_API_KEY");
            }
            char[] typed = console.readPassword("API key: ");
            return typed == null ? "" : new String(typed);
        }
        try {
            String line =
                    new BufferedReader(new InputStreamReader(aenv.stdio().in(), StandardCharsets.UTF_8)).readLine();
            return line == null ? "" : line;
        } catch (IOException e) {
            throw new ApiException(0, "cannot read the key from stdin: " + ApiException.describe(e));
        }
    }
}
