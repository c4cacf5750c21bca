# The certificate as one string: the line that starts with "Certificate"
# and the indented lines under it (its cell, its keys, the records outside
# it), wrapped lines joined with single spaces.
certificate_text <- function(lines) {
  i <- grep("^Certificate", lines)[1]
  j <- i
  while (j < length(lines) && grepl("^ ", lines[j + 1])) j <- j + 1
  gsub(" +", " ", paste(lines[i:j], collapse = " "))
}
