package io.agentenv.backend.container.network;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ProcessRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-sandbox egress rules in the host setup's nftables table {@code ip agentenv}: a chain {@code egress-<host veth>}
 * holding the sandbox's allow/deny/default rules, entered through the verdict map {@code egress} from the host-wide
 * forward chain (after the rules nobody can override). Each change is one atomic {@code nft -f} transaction, so a
 * failed update leaves the previous rules in force. Denied traffic is rejected (the connect fails at once).
 */
public final class EgressFirewall {

    static final String TABLE = "ip agentenv";
    private static final String CHAIN_PREFIX = "egress-";
    private static final String REJECT = "reject with icmp type admin-prohibited";
    private static final Duration TIMEOUT = Duration.ofSeconds(15);
    private static final Logger log = LoggerFactory.getLogger(EgressFirewall.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ProcessRunner runner;

    public EgressFirewall(ProcessRunner runner) {
        this.runner = requireNonNull(runner, "runner is null");
    }

    /** Replaces the slot's rules with {@code policy}; an open policy removes them. */
    public void apply(NetSlot slot, EgressPolicy policy) throws CommandFailedException, InterruptedException {
        String chain = chain(slot.hostVeth());
        StringBuilder batch = new StringBuilder();
        if (policy.isOpen()) {
            removal(batch, slot.hostVeth());
        } else {
            batch.append("add chain ").append(TABLE).append(' ').append(chain).append('\n');
            batch.append("flush chain ").append(TABLE).append(' ').append(chain).append('\n');
            if (!policy.allow().isEmpty()) {
                batch.append(rule(chain, "ip daddr { " + String.join(", ", policy.allow()) + " } accept"));
            }
            if (!policy.deny().isEmpty()) {
                batch.append(rule(chain, "ip daddr { " + String.join(", ", policy.deny()) + " } " + REJECT));
            }
            if (policy.otherwise() == EgressPolicy.Default.DENY) {
                batch.append(rule(chain, REJECT));
            }
            batch.append("add element ")
                    .append(TABLE)
                    .append(" egress { \"")
                    .append(slot.hostVeth())
                    .append("\" : jump ")
                    .append(chain)
                    .append(" }\n");
        }
        nft(batch.toString());
        log.atInfo()
                .addKeyValue("netns", slot.netnsName())
                .addKeyValue("otherwise", policy.otherwise())
                .addKeyValue("allow", policy.allow().size())
                .addKeyValue("deny", policy.deny().size())
                .log("egress rules applied");
    }

    /** Removes the slot's rules, if any. Must run before the slot's veth name can be handed to another sandbox. */
    void remove(NetSlot slot) throws CommandFailedException, InterruptedException {
        if (!chains().contains(chain(slot.hostVeth()))) {
            return;
        }
        StringBuilder batch = new StringBuilder();
        removal(batch, slot.hostVeth());
        nft(batch.toString());
    }

    /** Names of the egress chains for veths starting with {@code vethPrefix}. */
    public List<String> chainsFor(String vethPrefix) throws CommandFailedException, InterruptedException {
        return chains().stream()
                .filter(c -> c.startsWith(CHAIN_PREFIX + vethPrefix))
                .toList();
    }

    /** Removes every egress chain (and map entry) of veths starting with {@code vethPrefix}: start-up reaping. */
    List<String> reap(String vethPrefix) throws CommandFailedException, InterruptedException {
        List<String> found = chainsFor(vethPrefix);
        if (found.isEmpty()) {
            return found;
        }
        StringBuilder batch = new StringBuilder();
        for (String chain : found) {
            removal(batch, chain.substring(CHAIN_PREFIX.length()));
        }
        nft(batch.toString());
        return found;
    }

    private static String chain(String veth) {
        return CHAIN_PREFIX + veth;
    }

    private static String rule(String chain, String body) {
        return "add rule " + TABLE + " " + chain + " " + body + "\n";
    }

    /**
     * Deleting a map element or chain that does not exist fails the whole transaction, so each deletion is preceded by
     * an "add" of the same object, which is a no-op when it exists.
     */
    private static void removal(StringBuilder batch, String veth) {
        String chain = chain(veth);
        batch.append("add chain ").append(TABLE).append(' ').append(chain).append('\n');
        batch.append("add element ")
                .append(TABLE)
                .append(" egress { \"")
                .append(veth)
                .append("\" : jump ")
                .append(chain)
                .append(" }\n");
        batch.append("delete element ")
                .append(TABLE)
                .append(" egress { \"")
                .append(veth)
                .append("\" }\n");
        batch.append("delete chain ").append(TABLE).append(' ').append(chain).append('\n');
    }

    private List<String> chains() throws CommandFailedException, InterruptedException {
        String out = runner.run(Command.of(TIMEOUT, "nft", "-j", "list", "chains", "ip"))
                .stdout();
        List<String> names = new ArrayList<>();
        try {
            for (JsonNode item : JSON.readTree(out).path("nftables")) {
                JsonNode chain = item.path("chain");
                if (chain.path("table").asText().equals("agentenv")
                        && chain.path("name").asText().startsWith(CHAIN_PREFIX)) {
                    names.add(chain.path("name").asText());
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("nft -j printed something that is not JSON", e);
        }
        return names;
    }

    private void nft(String batch) throws CommandFailedException, InterruptedException {
        runner.run(Command.of(TIMEOUT, "nft", "-f", "-").withStdin(batch.getBytes(StandardCharsets.UTF_8)));
    }
}
