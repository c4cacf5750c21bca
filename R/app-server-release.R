# ---- Microdata release --------------------------------------------------------

app_goals <- c("all_matches", "unique_matches", "sample_uniques")

# The damage ifpr(method = "optimal") can make least (pram_damage()'s
# measures), as the page offers them.
app_damage_choices <- c(
  "key values changed" = "keys",
  "records changed" = "records",
  "variance of the cell counts (eq. 6.3)" = "variance",
  "distance: ordered keys cost how far they move" = "distance"
)

# The keys whose values have an order (numbers, ordered factors): those a
# distance can be declared for.
app_ordered_candidates <- function(keys, d) {
  keys[vapply(keys, function(k) has_order(d[[k]]), NA)]
}

server_release <- function(input, output, session, rv, work) {
  output$release_message <- app_render_message(rv, "release")

  output$partition_ui <- shiny::renderUI({
    keys <- rv$keys
    d <- shiny::isolate(rv$data)
    if (!length(keys) || is.null(d)) return(app_help("Choose keys on the Data page first."))
    lapply(seq_along(keys), function(i) {
      k <- keys[i]
      numeric_key <- is.numeric(d[[k]])
      shiny::div(
        shiny::selectInput(paste0("part_", i), k, c("changes freely" = "free", "never changes" = "keep", "changes within groups" = "group")),
        shiny::conditionalPanel(sprintf("input.part_%d == 'group'", i),
          shiny::textInput(paste0("part_groups_", i), if (numeric_key) "breaks, e.g. 0, 18, 65, Inf" else "groups, e.g. a, b | c | d, e"))
      )
    })
  })

  output$ordered_ui <- shiny::renderUI({
    keys <- rv$keys
    d <- shiny::isolate(rv$data)
    if (!length(keys) || is.null(d)) return(NULL)
    cand <- app_ordered_candidates(keys, d)
    if (!length(cand)) return(app_help("No key has ordered values (numbers or an ordered factor): every change costs 1, as for key values changed."))
    shiny::checkboxGroupInput("ordered", "Ordered keys: a change costs how far the value moves (age by one year costs 1, by forty 40)",
                              cand, selected = cand)
  })
  output$weights_ui <- shiny::renderUI({
    keys <- rv$keys
    if (!length(keys)) return(NULL)
    shiny::div(
      shiny::h6("What a change of each key costs (weights; 1 for each by default)"),
      lapply(seq_along(keys), function(i) shiny::numericInput(paste0("weight_", i), keys[i], value = 1, min = 0, step = 0.5))
    )
  })
  # kept up to date while hidden, so that they never hold keys of earlier data
  shiny::outputOptions(output, "ordered_ui", suspendWhenHidden = FALSE)
  shiny::outputOptions(output, "weights_ui", suspendWhenHidden = FALSE)

  shiny::observeEvent(input$release_go, app_guard(rv, "release", app_release(input, rv, work)))

  cert <- shiny::reactive(rv$release$certificate)
  output$cert_value <- shiny::renderText(if (is.null(cert())) "\u2013" else format(signif(cert()$risk, 6)))
  output$cert_xi <- shiny::renderText(if (is.null(cert())) "\u2013" else format(cert()$xi))
  output$cert_changed <- shiny::renderText({
    c <- cert()
    if (is.null(c)) return("\u2013")
    sprintf("%s (%.1f%%)", format(c$records_changed, big.mark = ","), 100 * c$records_changed / c$n_records)
  })
  output$cert_words <- shiny::renderUI({
    rel <- rv$release
    if (is.null(rel)) return(app_help("Set \u03be and the design, then press Release."))
    app_certificate_words(rel)
  })
  output$release_summary <- shiny::renderPrint(if (!is.null(rv$release)) print(summary(rv$release)))
  output$release_plot <- shiny::renderPlot(if (!is.null(rv$release)) graphics::plot(rv$release))
  output$risk_table <- shiny::renderTable(rv$risk$table, striped = TRUE, spacing = "xs", digits = 4)
  output$risk_changes <- shiny::renderTable(rv$risk$changes, striped = TRUE, spacing = "xs", digits = 2)
  output$risk_plot <- shiny::renderPlot(if (!is.null(rv$risk)) suppressWarnings(graphics::plot(rv$risk)))
  output$utility_tvd <- shiny::renderTable(rv$utility$tvd, striped = TRUE, spacing = "xs", digits = 5)
  output$utility_plot <- shiny::renderPlot(if (!is.null(rv$utility)) graphics::plot(rv$utility))
  output$utility_tvd_plot <- shiny::renderPlot(if (!is.null(rv$utility)) graphics::plot(rv$utility, which = "tvd"))
}

app_release <- function(input, rv, work) {
  if (is.null(rv$data) || !length(rv$keys)) return(app_fail(rv, "release", "Load data and choose the key variables on the Data page first."))
  steps <- app_release_steps(input, rv$keys, rv$data)
  rv$release <- NULL
  rv$publication <- NULL
  rv$publish_code <- NULL
  ok <- FALSE
  shiny::withProgress(message = "Releasing", value = 0.1, detail = "design, exact certificate and draw (ifpr)", {
    ok <- app_run(steps[1:2], work, rv, "release")
    if (ok) {
      shiny::incProgress(0.5, detail = "release risk and utility")
      ok <- app_run(steps[3:4], work, rv, "release")
    }
  })
  if (!ok) return()
  rv$release <- work$release
  rv$risk <- work$risk
  rv$utility <- work$utility
  rv$seed <- attr(steps, "seed")
  rv$release_code <- unclass(steps)
  app_set_publication(rv, work$release)
  shiny::showNotification(sprintf("Released: exact maximum risk %s.", format(signif(work$release$certificate$risk, 6))), type = "message", duration = 5)
}

# The publication of the release (issue 33), made once: the Downloads page
# offers it, and the script writes it, exactly when it could be made.
app_set_publication <- function(rv, release) {
  pub <- tryCatch(publish_plan(release), error = function(e) e)
  failed <- inherits(pub, "error")
  rv$publication <- if (!failed) pub
  rv$publication_error <- if (failed) app_condition_text(pub)
  rv$publish_code <- if (!failed) list(quote(sdcRisk::publish_plan(release, "publication.json")))
}

# The four steps of a release (seed, ifpr(), its risk and utility), from
# the inputs, each checked; the seed as attribute.
app_release_steps <- function(input, keys, d) {
  xi <- input$xi
  number <- is.numeric(xi) && length(xi) == 1L && is.null(attributes(xi))
  if (!number || is.na(xi) || xi <= 0 || xi >= 1) {
    given <- if (is.null(xi) || (number && is.na(xi))) "nothing" else if (number) format(xi) else app_show(xi)
    app_reject(sprintf("\u03be must be a number strictly between 0 and 1 (a probability); %s was given.", given))
  }
  seed <- tryCatch(app_in_number(input$seed, "The seed", whole = TRUE),
                   sdcRisk_app_input = function(e) app_reject("The seed must be a whole number."))
  partition <- app_partition(input, keys, d)
  known <- app_in_choice(input$release_known, c("none", "all"), "Intruders who know only some keys")
  method <- app_in_choice(input$method, c("tiered", "nayak", "optimal"), "The method")
  optimal <- method == "optimal"
  # the damage and its ordered keys are read by the least-damage design
  # only, as the page shows them
  damage <- if (optimal) app_in_choice(input$damage %||% "keys", app_damage_choices, "The damage to make least")
  ordered <- if (identical(damage, "distance")) app_in_columns(input$ordered, app_ordered_candidates(keys, d), "Ordered keys")
  weights <- if (isTRUE(damage %in% c("keys", "distance"))) app_weights(input, keys)
  release <- app_call(quote(sdcRisk::ifpr), .first = list(quote(data)),
    keys = keys, xi = xi,
    goal = app_in_choice(input$goal, app_goals, "The goal"),
    partition = if (length(partition)) partition,
    method = method,
    calibrate = if (!optimal) app_in_choice(input$calibrate, c("exact", "bound"), "The calibration"),
    on_infeasible = app_in_choice(input$on_infeasible, c("error", "merge"), "A partition set too small"),
    na = app_in_choice(input$na, c("exclude", "category"), "Missing key values"),
    known = if (known == "all") TRUE,
    damage = damage,
    weights = weights,
    ordered = if (length(ordered)) ordered
  )
  utility_vars <- c(as.list(keys), if (length(keys) > 1L) list(keys))
  structure(list(
    call("set.seed", app_lang(seed)),
    app_assign("release", release),
    quote(risk <- sdcRisk::release_risk(release)),
    app_assign("utility", app_call(quote(sdcRisk::release_utility), utility_vars, .first = list(quote(release))))
  ), seed = seed)
}

app_certificate_words <- function(rel) {
  c <- rel$certificate
  keys <- rel$keys
  where <- paste(paste(names(c$cell_keys), vapply(c$cell_keys, function(v) as.character(v[1]), ""), sep = " = "), collapse = ", ")
  goal <- switch(c$goal, all_matches = "whatever the number of released records that match",
                 unique_matches = "when exactly one released record matches",
                 sample_uniques = "for persons alone in their cell, when exactly one released record matches")
  shiny::div(class = "sdc-words", id = "cert_words_text",
    shiny::p(sprintf("No intruder who knows the %s of a person, and picks one of the released records that match them, is right with probability above %s, %s.",
                     paste(keys, collapse = ", "), format(c$xi), goal)),
    shiny::p(sprintf("This is proven, not estimated: the exact maximum of R_j(a, t) is %s, attained in the cell %s (%s record%s) when %s released record%s.",
                     format(signif(c$risk, 6)), where, c$count, if (c$count == 1) "" else "s", c$a, if (c$a == 1) " matches" else "s match")),
    if (!is.null(c$known)) shiny::p(sprintf("For intruders who know only some keys the worst is %s (%s).",
                                            format(signif(max(c$known$risk), 6)), c$known$known[which.max(c$known$risk)])),
    if (!is.null(c$design)) shiny::p(id = "cert_design_text", app_design_words(c$design))
  )
}

# What the least-damage design costs, beside the certificate: its expected
# damage (pram_damage()) and, under Goal 3, the lower bound of any design.
app_design_words <- function(design) {
  v <- design$values
  num <- function(x) format(round(x, 1), big.mark = ",", nsmall = 1)
  paste0(
    sprintf("The design minimises the %s: in expectation %s records change and %s key values (%.2f per changed record)%s, and the variance of the cell counts is %s.",
            switch(design$damage, keys = "key values changed", records = "records changed",
                   variance = "variance of the cell counts", distance = "distance on the ordered keys"),
            num(v[["records"]]), num(v[["keys"]]),
            v[["keys"]] / max(v[["records"]], 1e-300),
            if (design$damage == "distance") sprintf(", %s in distance", num(v[["distance"]])) else "", num(v[["variance"]])),
    if (!is.null(design$lower) && !is.na(design$lower[["records"]])) {
      sprintf(" No unbiased PRAM that meets \u03be changes fewer than %s records (this design: %.3f times that).",
              num(design$lower[["records"]]), v[["records"]] / max(design$lower[["records"]], 1e-300))
    }
  )
}

# The weights of the keys (what a change of each costs), from the inputs,
# each a nonnegative number (1 when the page has not shown it): NULL when
# every key costs 1, else the keys that do not, named.
app_weights <- function(input, keys) {
  w <- vapply(seq_along(keys), function(i) {
    what <- sprintf("The weight of %s", keys[i])
    x <- app_in_number(input[[paste0("weight_", i)]] %||% 1, what)
    if (x < 0) app_reject(sprintf("%s must be 0 or more; the page sent %s.", what, app_show(x)))
    x
  }, 0)
  if (all(w == 1)) return(NULL)
  stats::setNames(w, keys)[w != 1]
}

# The partition list ifpr() takes, from the inputs (each checked).
app_partition <- function(input, keys, d) {
  out <- list()
  for (i in seq_along(keys)) {
    k <- keys[i]
    rule <- input[[paste0("part_", i)]] %||% "free"
    rule <- app_in_choice(rule, c("free", "keep", "group"), sprintf("How %s may change", k))
    if (rule == "keep") out[[k]] <- "keep"
    if (rule == "group") {
      txt <- trimws(app_in_string(input[[paste0("part_groups_", i)]], sprintf("The groups of %s", k), empty = TRUE))
      if (!nzchar(txt)) app_reject(sprintf("Give the groups of %s, or let it change freely.", k))
      if (is.numeric(d[[k]])) {
        b <- suppressWarnings(as.numeric(trimws(strsplit(txt, ",", fixed = TRUE)[[1]])))
        if (anyNA(b) || length(b) < 2L) app_reject(sprintf("The breaks of %s must be numbers separated by commas, such as 0, 18, 65, Inf; got '%s'.", k, txt))
        out[[k]] <- b
      } else {
        out[[k]] <- lapply(strsplit(txt, "|", fixed = TRUE)[[1]], function(g) trimws(strsplit(g, ",", fixed = TRUE)[[1]]))
      }
    }
  }
  out
}
