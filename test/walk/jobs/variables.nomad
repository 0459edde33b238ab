# HCL2 input variables and locals, as Nomad job files use them (nomad job run -var).
variable "message" {
  type    = string
  default = "hello"
}

variable "instances" {
  type    = number
  default = 2

  validation {
    condition     = var.instances > 0
    error_message = "At least one instance."
  }
}

locals {
  shout = "${var.message}!"
}

job "variables" {
  type = "batch"

  group "g" {
    count = var.instances

    task "t" {
      driver = "raw_exec"

      env {
        MESSAGE = local.shout
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"$MESSAGE from ${NOMAD_ALLOC_INDEX} of ${NOMAD_ALLOC_NAME}\""]
      }
    }
  }
}
