# Artifacts: one fetched over HTTP with a checksum into a destination dir, one archive unpacked, one by file://.
# The walk (real-jobs.test.ts) fills in @BASE@ (its HTTP server), @SHA256@ and @DIR@ (the files it serves).
job "artifact" {
  type = "batch"

  meta {
    base = "@BASE@"
  }

  group "g" {
    task "t" {
      driver = "raw_exec"

      artifact {
        source      = "${NOMAD_META_base}/hello.txt"
        destination = "local/fetched"

        options {
          checksum = "sha256:@SHA256@"
        }
      }

      artifact {
        source      = "${NOMAD_META_base}/bundle.tar.gz"
        destination = "local/bundle"
      }

      artifact {
        source      = "file://@DIR@/hello.txt"
        destination = "local/local-copy.txt"
        mode        = "file"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/fetched/hello.txt local/bundle/inner.txt local/local-copy.txt"]
      }
    }
  }
}
