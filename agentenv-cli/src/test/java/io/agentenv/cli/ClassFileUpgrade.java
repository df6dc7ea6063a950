package io.agentenv.cli;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeTransform;
import java.lang.constant.ClassDesc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * Build-time only (test scope, never in aenv.jar): rewrites the class files under a package prefix of a jar that are
 * older than Java 6 (version &lt; 50; picocli's are Java 5's) as Java 25 class files, the same code with stack maps
 * computed by the JDK's class-file API. A JDK AOT cache leaves such old classes out (they are verified by the old type
 * inferencer when linked, which the cache cannot record), so aenv loaded, verified and interpreted picocli's
 * ~230 classes on every start; rewritten, they are archived and pre-linked like the rest. {@code mvn package} runs it
 * on target/aenv.jar after shading and before the AOT training:
 * <pre>java -cp target/agentenv-cli-*-tests.jar io.agentenv.cli.ClassFileUpgrade target/aenv.jar picocli/</pre>
 * When anything fails it says so and leaves the jar as it was (exit 0): only the start-up is slower then.
 */
final class ClassFileUpgrade {
    /** Class files below this major version (Java 6) have no stack maps. */
    private static final int STACK_MAPS_SINCE = 50;

    private ClassFileUpgrade() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: ClassFileUpgrade <jar> <package prefix, e.g. picocli/>");
            System.exit(2);
        }
        Path jar = Path.of(args[0]);
        Path upgraded = jar.resolveSibling(jar.getFileName() + ".upgrading");
        try {
            int count = upgrade(jar, upgraded, args[1]);
            Files.move(upgraded, jar, StandardCopyOption.REPLACE_EXISTING);
            System.out.println("upgraded " + count + " class files under " + args[1] + " in " + jar + " to version "
                    + ClassFile.latestMajorVersion());
        } catch (IOException | RuntimeException e) {
            System.out.println(
                    "WARNING: " + jar + " left as it was (" + e + "); its old classes stay out of the AOT cache");
        } finally {
            Files.deleteIfExists(upgraded);
        }
    }

    /** Copies {@code jar} to {@code out} entry by entry, in order, rewriting the old classes under {@code prefix}. */
    static int upgrade(Path jar, Path out, String prefix) throws IOException {
        try (ZipFile zip = new ZipFile(jar.toFile());
                ZipOutputStream target = new ZipOutputStream(Files.newOutputStream(out))) {
            List<ZipEntry> entries = new ArrayList<>();
            zip.stream().forEach(entries::add);
            Map<String, byte[]> old = new LinkedHashMap<>();
            for (ZipEntry e : entries) {
                if (e.getName().startsWith(prefix) && e.getName().endsWith(".class")) {
                    byte[] bytes = zip.getInputStream(e).readAllBytes();
                    if (majorVersion(bytes) < STACK_MAPS_SINCE) {
                        old.put(e.getName(), bytes);
                    }
                }
            }
            Map<String, byte[]> rewritten = rewrite(old.values());
            for (ZipEntry e : entries) {
                ZipEntry copy = new ZipEntry(e.getName());
                copy.setTime(e.getTime());
                target.putNextEntry(copy);
                byte[] replacement = old.containsKey(e.getName()) ? rewritten.get(e.getName()) : null;
                if (replacement != null) {
                    target.write(replacement);
                } else if (!e.isDirectory()) {
                    zip.getInputStream(e).transferTo(target);
                }
                target.closeEntry();
            }
            return rewritten.size();
        }
    }

    /** The classes as the latest class-file version, keyed by entry name; stack maps from their own hierarchy and the JDK's. */
    static Map<String, byte[]> rewrite(java.util.Collection<byte[]> classes) {
        ClassFile parser = ClassFile.of();
        List<ClassModel> models = new ArrayList<>();
        Map<ClassDesc, ClassHierarchyResolver.ClassHierarchyInfo> hierarchy = new HashMap<>();
        for (byte[] bytes : classes) {
            ClassModel model = parser.parse(bytes);
            models.add(model);
            hierarchy.put(
                    model.thisClass().asSymbol(),
                    (model.flags().flagsMask() & ClassFile.ACC_INTERFACE) != 0
                            ? ClassHierarchyResolver.ClassHierarchyInfo.ofInterface()
                            : ClassHierarchyResolver.ClassHierarchyInfo.ofClass(
                                    model.superclass().map(c -> c.asSymbol()).orElse(null)));
        }
        ClassHierarchyResolver resolver =
                ClassHierarchyResolver.defaultResolver().orElse(hierarchy::get);
        ClassFile writer = ClassFile.of(
                ClassFile.ClassHierarchyResolverOption.of(resolver), ClassFile.StackMapsOption.GENERATE_STACK_MAPS);
        ClassTransform latest = ClassTransform.endHandler(
                        builder -> builder.withVersion(ClassFile.latestMajorVersion(), 0))
                .andThen(ClassTransform.transformingMethodBodies(CodeTransform.ACCEPT_ALL));
        Map<String, byte[]> out = new HashMap<>();
        for (ClassModel model : models) {
            out.put(model.thisClass().asInternalName() + ".class", writer.transformClass(model, latest));
        }
        return out;
    }

    private static int majorVersion(byte[] classFile) {
        return classFile.length < 8 ? Integer.MAX_VALUE : ((classFile[6] & 0xff) << 8) | (classFile[7] & 0xff);
    }
}
