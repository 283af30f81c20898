"""The lint scripts' own rules (scripts/test's lint stage runs this first): check-format finds the
one file clang-format would change among many checked in one run, and check-tidy neither skips a
batch that does not compile nor leaves a generated source missing."""
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load(script):
    path = os.path.join(ROOT, "scripts", script)
    loader = importlib.machinery.SourceFileLoader(script.replace("-", "_"), path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


check_format = load("check-format")
check_tidy = load("check-tidy")


class CheckFormat(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="imgmcp-lint-")
        self.addCleanup(shutil.rmtree, self.dir)
        shutil.copy(os.path.join(ROOT, ".clang-format"), self.dir)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_one_run_names_only_the_files_that_differ(self):
        clean = [self.write(f"clean{i}.cpp", "int F%d() { return %d; }\n" % (i, i))
                 for i in range(6)]
        messy = self.write("messy.cpp", "int  G( ){return 1;}\n")
        self.assertEqual(check_format.drifted_in(clean + [messy] + clean), {messy})
        self.assertEqual(check_format.drifted_in(clean), set())

    def test_a_run_that_fails_without_naming_a_file_fails_its_whole_batch(self):
        clean = self.write("clean.cpp", "int F() { return 0; }\n")
        missing = os.path.join(self.dir, "missing.cpp")
        self.assertEqual(check_format.drifted_in([clean, missing]), {clean, missing})


class CheckTidy(unittest.TestCase):
    def test_an_error_counts_wherever_it_is_and_a_warning_only_in_production_code(self):
        outside = "../../tmp/build/gemini_client/CMakeFiles/x.dir/Unity/unity_0_cxx.cxx"
        self.assertTrue(check_tidy.kept((outside, 11, 10, "error", "file not found")))
        self.assertFalse(check_tidy.kept((outside, 11, 10, "warning", "a header's warning")))
        self.assertTrue(check_tidy.kept(("common/log.cpp", 3, 1, "warning", "copied")))
        self.assertFalse(check_tidy.kept(("tests/unit/x.cpp", 3, 1, "warning", "copied")))

    def test_a_generated_source_a_batch_includes_is_made_before_the_batch_is_checked(self):
        if shutil.which("cmake") is None or shutil.which("ninja") is None:
            self.fail("cmake and ninja are needed (scripts/setup installs them)")
        project = tempfile.mkdtemp(prefix="imgmcp-lint-project-")
        self.addCleanup(shutil.rmtree, project)
        build = os.path.join(project, "build")
        with open(os.path.join(project, "source.txt"), "w") as f:
            f.write("int Made() { return 1; }\n")
        with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.20)\nproject(p CXX)\n"
                    "add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/made.cpp COMMAND "
                    "${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/source.txt made.cpp)\n"
                    "add_library(p STATIC ${CMAKE_BINARY_DIR}/made.cpp)\n")
        subprocess.run(["cmake", "-S", project, "-B", build, "-G", "Ninja"], check=True,
                       stdout=subprocess.DEVNULL)
        made = os.path.join(build, "made.cpp")
        unity = os.path.join(build, "Unity", "unity_0_cxx.cxx")
        os.makedirs(os.path.dirname(unity))
        with open(unity, "w") as f:
            f.write(f'#include "{made}"\n')
        self.assertFalse(os.path.exists(made))
        check_tidy.generate(build, [{"file": unity}])
        self.assertTrue(os.path.exists(made))


if __name__ == "__main__":
    unittest.main()
